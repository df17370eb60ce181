// tenantd on PostgreSQL, as a user would run one node of it: production settings as in
// tenantd-server.mjs (OWASP argon2, logger "error", rate limits off because the whole load
// comes from one IP), `database.url` with the default pool (10 connections), and every node
// of a run sharing the server key and the files directory. The first node bootstraps the
// default app and sets the bench collections; the others join the same database.
// Settings come from the environment, never argv (the URL carries a password).
import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import { toNodeHandler } from "h3/node";
import { createTenantBackend, attachJsonClientErrors } from "../dist/index.js";
import { serveIpc, listen, closeServer, drain } from "./child-runtime.mjs";
import { BENCH_ORIGIN, BENCH_QUOTAS, COLLECTION_SETTINGS } from "./dataset.mjs";
import { pgCloneSeed, pgSeedSearch } from "./pg-clone-seed.mjs";
import { pgSeedMembers } from "./org-seed.mjs";

const { BENCH_PG_URL: databaseUrl, BENCH_SECRET_KEY: secretKey, BENCH_DATA_DIR: dataDir, BENCH_FIRST_NODE: first } = process.env;
if (!databaseUrl || !secretKey || !dataDir) throw new Error("tenantd-pg-server: BENCH_PG_URL, BENCH_SECRET_KEY and BENCH_DATA_DIR must be set by the parent");
mkdirSync(dataDir, { recursive: true });

let handler = (_req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = createServer((req, res) => handler(req, res));
attachJsonClientErrors(server);
const url = await listen(server);

const backend = await createTenantBackend({
  dataDir,
  secretKey,
  database: { url: databaseUrl },
  logger: "error",
  rateLimit: false,
  publicUrl: url,
  bootstrap: first === "1",
});
handler = toNodeHandler(backend);
const app = backend.defaultApp;
if (first === "1") {
  if (!app) throw new Error("tenantd-pg-server: the first node found a database that already has apps; the bench needs an empty one");
  await backend.admin.updateApp(app.id, { settings: { collections: COLLECTION_SETTINGS, quotas: BENCH_QUOTAS, corsOrigins: [BENCH_ORIGIN] } });
}

let closing;
async function shutdown() {
  closing ??= (async () => {
    await closeServer(server);
    await drain();
    await backend.close();
  })();
  return closing;
}

serveIpc({
  /** Copies a record made through the API into more rows, in PostgreSQL (see pg-clone-seed.mjs). */
  "seed.clone": (args) => pgCloneSeed(databaseUrl, args),
  /** The full-text index rows of a tenant's seeded records, in PostgreSQL (see pg-clone-seed.mjs). */
  "seed.search": (args) => pgSeedSearch(databaseUrl, args),
  /** Members of an organization, in PostgreSQL (org-seed.mjs). */
  "seed.orgMembers": (args) => pgSeedMembers(databaseUrl, args),
  /** Automatic index builds, where this tenantd has them on PostgreSQL. */
  "records.settled": async () => {
    const records = backend.core.db.records;
    if (typeof records.autoIndexesSettled !== "function") return false;
    await records.autoIndexesSettled();
    return true;
  },
  /** PostgreSQL's EXPLAIN of the page query tenantd runs for this list (its records repository's own explain). */
  "explain.list": async ({ appId, tenantId, collection, filter }) => {
    const [{ parseFilter, parseSort }, { recordScope }] = await Promise.all([import("../dist/data/query.js"), import("../dist/data/records.js")]);
    const liveApp = await backend.core.db.apps.findById(appId);
    const { scope } = recordScope({ app: liveApp, tenantId }, collection);
    return backend.core.db.records.explainList(scope, parseFilter(JSON.stringify(filter)), parseSort(undefined));
  },
  shutdown,
});

process.send({ type: "ready", url, app: app && { id: app.id, publishableKey: app.publishableKey } });
