// Parse Server 9 on the bench's PostgreSQL, as a peer (issue 40): `run.mjs --peers parse`.
// It lives here, with its own package.json, so that it resolves parse-server from this
// folder's node_modules and never becomes a dependency of tenantd. Parse's own defaults,
// logs off; its database is its own on the same server. The parent seeds through `seed.*`.
// Settings come from the environment, never argv (the URL carries a password).
import { createServer } from "node:http";
import { randomBytes } from "node:crypto";
import express from "express";
import { serveIpc, listen, closeServer, drain } from "../../child-runtime.mjs";
import { COLLECTIONS, seedTime } from "../../dataset.mjs";
import { DATA_EXPR, checkDataExpr, connect, quote, settleSeeded } from "../../pg-clone-seed.mjs";

// Parse's first logger is made with the module, from the environment: no log files in the
// working directory. Until the server installs its own (silent) one, its notices about
// options whose defaults will change (a dozen lines) go nowhere.
process.env.PARSE_SERVER_LOGS_FOLDER ??= "null";
const { ParseServer } = await import("parse-server");
const { setLogger } = await import("parse-server/lib/logger.js");
const quiet = () => {};
setLogger({ warn: quiet, info: quiet, error: quiet, verbose: quiet, debug: quiet, silly: quiet, log: quiet });

const { BENCH_PG_URL: databaseURI } = process.env;
if (!databaseURI) throw new Error("parse server: BENCH_PG_URL must be set by the parent");

const appId = "bench";
const masterKey = randomBytes(16).toString("hex");
const app = express();
const server = createServer(app);
const url = await listen(server);
const parse = new ParseServer({
  databaseURI,
  appId,
  masterKey,
  serverURL: `${url}/parse`,
  silent: true,
  logsFolder: null,
});
await parse.start();
app.use("/parse", parse.app);

/** The record fields of dataset.mjs (recordData) and the owning user, as Parse columns. */
const FIELDS = { owner: "String", status: "String", category: "String", state: "String", phase: "String", n: "Number", title: "String" };
// Clients may not create classes (Parse's default): the bench's classes are made with the
// master key, as a Parse developer would in the dashboard.
for (const className of [COLLECTIONS.items, COLLECTIONS.big]) {
  const res = await fetch(`${url}/parse/schemas/${className}`, {
    method: "POST",
    headers: { "x-parse-application-id": appId, "x-parse-master-key": masterKey, "content-type": "application/json" },
    body: JSON.stringify({ className, fields: Object.fromEntries(Object.entries(FIELDS).map(([k, type]) => [k, { type }])) }),
  });
  if (!res.ok) throw new Error(`parse server: could not create class ${className}: ${res.status} ${await res.text()}`);
}

// The seeder's own connection (postgres.js, from tenantd's node_modules through pg-clone-seed.mjs).
const sql = connect(databaseURI);

let closing;
function shutdown() {
  closing ??= (async () => {
    await closeServer(server);
    await drain();
    await parse.handleShutdown?.();
    await sql.end({ timeout: 5 });
  })();
  return closing;
}

serveIpc({
  /**
   * Records 1..count-1 of `owner` in `className` (record 0 made through the API), as
   * pg-clone-seed.mjs seeds tenantd's, straight into Parse's table, readable and writable by
   * the owner alone (the ACL a Parse app gives a user's own objects); then the index a
   * Parse developer adds for the list (owner, field, createdAt) per field in `indexed`,
   * VACUUM (ANALYZE) and CHECKPOINT.
   */
  "seed.records": async ({ className, owner, count, indexed = [] }) => {
    const started = Date.now();
    await checkDataExpr(sql);
    const table = quote(className);
    const end = seedTime(count, count);
    // The JSON of recordData(i), spread into Parse's columns (one per field).
    const fields = `(${DATA_EXPR("i")})::jsonb`;
    for (let from = 1; from < count; from += 100_000) {
      await sql.unsafe(
        `INSERT INTO ${table} ("objectId", "createdAt", "updatedAt", "_rperm", "_wperm", owner, status, category, state, phase, n, title)
         SELECT substr(md5(random()::text || i), 1, 10), to_timestamp(at / 1000.0), to_timestamp(at / 1000.0), ARRAY[$1::text], ARRAY[$1::text], $1,
           d ->> 'status', d ->> 'category', d ->> 'state', d ->> 'phase', (d ->> 'n')::double precision, d ->> 'title'
         FROM (SELECT i, $2::bigint - ($3::bigint - i) AS at, ${fields} AS d FROM generate_series($4::bigint, $5::bigint) AS g(i)) AS src`,
        [owner, end, count, from, Math.min(count, from + 100_000) - 1],
      );
    }
    const insertMs = Date.now() - started;
    for (const field of indexed) await sql.unsafe(`CREATE INDEX IF NOT EXISTS ${quote(`${className}_owner_${field}_created`)} ON ${table} (owner, ${quote(field)}, "createdAt")`);
    const indexMs = Date.now() - started - insertMs;
    const steps = await settleSeeded(sql, [className]);
    return { rows: count - 1, ms: Date.now() - started, steps: { insertMs, indexMs, ...steps } };
  },
  shutdown,
});

process.send({ type: "ready", url, app: { id: appId } });
