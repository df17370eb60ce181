// tenantd as it runs in production (OWASP argon2, fresh data directory, logger "error"),
// served by node:http on 127.0.0.1. Rate limits are off: the whole load comes from one IP.
import { createServer } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toNodeHandler } from "h3/node";
import { createTenantBackend, attachJsonClientErrors } from "../dist/index.js";
import { serveIpc, listen, closeServer, drain } from "./child-runtime.mjs";
import { BENCH_ORIGIN, BENCH_QUOTAS, COLLECTION_SETTINGS, searchWordsSql } from "./dataset.mjs";
import { searchDocument } from "../dist/data/text.js";
import { cloneSeed } from "./clone-seed.mjs";
import { sqliteSeedMembers } from "./org-seed.mjs";
import { startSqlTrace } from "./sql-trace.mjs";

const dataDir = mkdtempSync(join(tmpdir(), "tenantd-bench-"));
let handler = (_req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = createServer((req, res) => handler(req, res));
attachJsonClientErrors(server);
// Listen first: file URLs carry the public URL, which holds the port.
const url = await listen(server);

const backend = await createTenantBackend({ dataDir, logger: "error", rateLimit: false, publicUrl: url });
handler = toNodeHandler(backend);
const app = backend.defaultApp;
await backend.admin.updateApp(app.id, { settings: { collections: COLLECTION_SETTINGS, quotas: BENCH_QUOTAS, corsOrigins: [BENCH_ORIGIN] } });
const sqlite = backend.core.sqlite;

let trace;
let closing;
async function shutdown() {
  closing ??= (async () => {
    await closeServer(server);
    await drain();
    await backend.close();
    rmSync(dataDir, { recursive: true, force: true });
  })();
  return closing;
}

serveIpc({
  /** Copies a record made through the API into `rows` more rows of the same table (see clone-seed.mjs). */
  "seed.clone": (args) => cloneSeed(sqlite, args),
  /**
   * The full-text index rows of a tenant's seeded records (the clone copies records only), in
   * one INSERT … SELECT: tenantd's records_fts (rowid = seq, words, field words, app,
   * collection, language), for the records past the last one with words (the clones come
   * after their template, which the API indexed), rather than testing every record for a row. Fails unless a seeded record's row equals what tenantd itself
   * writes for it (data/text.ts searchDocument); the parent then counts searches through the API.
   */
  "seed.search": ({ tenantId, collection, language }) => {
    const started = Date.now();
    const json = (f) => `json_extract(r.data, '$.${f}')`;
    const fields = `json_object(${["status", "category", "state", "phase", "title"].map((f) => `'${f}', ${json(f)}`).join(", ")})`;
    const rows = sqlite
      .prepare(
        `INSERT INTO records_fts (rowid, text, fields, app_id, collection, lang)
         SELECT r.seq, ${searchWordsSql(json)}, ${fields}, r.app_id, r.collection, ? FROM records r
         WHERE r.tenant_id = ? AND r.collection = ? AND r.seq > (SELECT coalesce(max(rowid), 0) FROM records_fts)`,
      )
      .run(language, tenantId, collection).changes;
    const sample = sqlite.prepare("SELECT r.data, f.text, f.fields FROM records r JOIN records_fts f ON f.rowid = r.seq WHERE r.tenant_id = ? AND r.collection = ? ORDER BY r.seq DESC LIMIT 3").all(tenantId, collection);
    for (const { data, text, fields: made } of sample) {
      const doc = searchDocument(JSON.parse(data), language);
      if (doc.words.join(" ") !== text || JSON.stringify(doc.fields) !== made) throw new Error(`seed.search: the SQL words of ${data} are ${text} ${made}, tenantd makes ${doc.words.join(" ")} ${JSON.stringify(doc.fields)}`);
    }
    sqlite.pragma("wal_checkpoint(TRUNCATE)");
    return { rows, ms: Date.now() - started };
  },
  /** Records every SQL statement run until `trace.stop`, to EXPLAIN the one a request used. */
  "trace.start": () => {
    trace = startSqlTrace(sqlite);
    return true;
  },
  "trace.stop": ({ explainTable }) => {
    const statements = trace?.stop() ?? [];
    trace = undefined;
    return statements
      .filter((s) => /^\s*(SELECT|WITH)\b/i.test(s.sql) && (!explainTable || s.sql.includes(explainTable)))
      .map((s) => ({ sql: s.sql, plan: explainPlan(s) }));
  },
  /** Waits for automatic index builds queued by earlier lists (false: this tenantd has none). */
  "records.settled": async () => {
    const records = backend.core.db.records;
    if (typeof records.autoIndexesSettled !== "function") return false;
    await records.autoIndexesSettled();
    return true;
  },
  /** `count` records { status: "s<i % 10>", n: i } of one tenant, straight into SQLite (index-build.mjs). */
  "seed.rows": ({ appId, tenantId, collection, count }) => {
    const insert = sqlite.prepare(
      `WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < @n)
       INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
       SELECT 'rec_bench_' || @tenant || '_' || (@from + x), @app, @tenant, @collection, json_object('status', 's' || ((@from + x) % 10), 'n', @from + x), @at + x, @at + x FROM i`,
    );
    for (let from = 0; from < count; from += 100_000) insert.run({ n: Math.min(100_000, count - from), from, app: appId, tenant: tenantId, collection, at: Date.now() - count });
    return count;
  },
  "apps.create": async ({ name }) => {
    const created = await backend.admin.createApp({ name, settings: { quotas: BENCH_QUOTAS } });
    return { id: created.id, publishableKey: created.publishableKey };
  },
  "apps.settings": async ({ appId, settings }) => {
    await backend.admin.updateApp(appId, { settings });
    return true;
  },
  /** Members of an organization, straight into SQLite (org-seed.mjs). */
  "seed.orgMembers": (args) => sqliteSeedMembers(sqlite, args),
  "schema.tables": () => sqlite.prepare("SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'index') AND sql IS NOT NULL").all(),
  shutdown,
});

function explainPlan({ sql, args }) {
  try {
    return sqlite.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args).map((r) => r.detail);
  } catch (e) {
    return [`(could not explain: ${e.message})`];
  }
}

process.send({ type: "ready", url, app: { id: app.id, publishableKey: app.publishableKey } });
