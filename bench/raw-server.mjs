// The raw baseline: h3 v2 + better-sqlite3 doing the same SQL work per scenario as tenantd,
// without auth, validation or tenancy checks. The ratio tenantd/raw is what tenantd costs.
import { createServer } from "node:http";
import { executionAsyncResource } from "node:async_hooks";
import { mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import Database from "better-sqlite3";
import { H3, HTTPError, getRouterParam, getQuery } from "h3";
import { toNodeHandler } from "h3/node";
import { hash, verify } from "@node-rs/argon2";
import { serveIpc, listen, closeServer, drain } from "./child-runtime.mjs";
import { recordData, searchWordsSql, seedTime, SIZES, COLLECTIONS } from "./dataset.mjs";
import { turnCommit } from "./turn-commit.mjs";
import { accessToken } from "./access-token.mjs";

// The same cost tenantd uses in production (OWASP's argon2id).
const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1, algorithm: 2 };
const dataDir = mkdtempSync(join(tmpdir(), "tenantd-bench-raw-"));
mkdirSync(join(dataDir, "files"));

const db = new Database(join(dataDir, "raw.db"));
db.pragma("journal_mode = WAL");
db.pragma("synchronous = NORMAL");
db.exec(`
CREATE TABLE tenants (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, password_hash TEXT, created_at INTEGER NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, ended_at INTEGER);
CREATE TABLE refresh_tokens (token_hash TEXT PRIMARY KEY, session_id TEXT NOT NULL, created_at INTEGER NOT NULL, rotated_at INTEGER);
CREATE TABLE records (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, collection TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE INDEX records_list ON records (tenant_id, collection, created_at);
CREATE INDEX records_status ON records (tenant_id, collection, json_extract(data, '$.status'), created_at);
CREATE INDEX records_state ON records (tenant_id, collection, json_extract(data, '$.state'), created_at);
CREATE INDEX records_key ON records (tenant_id, collection, json_extract(data, '$.key'));
CREATE VIRTUAL TABLE records_fts USING fts5(text, tokenize = 'unicode61 remove_diacritics 0');
CREATE TABLE usage (tenant_id TEXT NOT NULL, feature TEXT NOT NULL, period TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (tenant_id, feature, period));
CREATE TABLE files (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, size INTEGER NOT NULL, mime TEXT NOT NULL, name TEXT, created_at INTEGER NOT NULL);
`);

const sha = (s) => createHash("sha256").update(s).digest("hex");
const token = () => randomBytes(32).toString("base64url");
const DAY = 86_400_000;

const q = {
  insertTenant: db.prepare("INSERT INTO tenants (id, email, password_hash, created_at) VALUES (?, ?, ?, ?)"),
  tenantByEmail: db.prepare("SELECT * FROM tenants WHERE email = ?"),
  tenantById: db.prepare("SELECT id, email, created_at FROM tenants WHERE id = ?"),
  insertSession: db.prepare("INSERT INTO sessions (id, tenant_id, created_at, expires_at) VALUES (?, ?, ?, ?)"),
  sessionById: db.prepare("SELECT * FROM sessions WHERE id = ?"),
  insertRefresh: db.prepare("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)"),
  byRefresh: db.prepare("SELECT s.*, r.rotated_at FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token_hash = ?"),
  markRotated: db.prepare("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?"),
  extend: db.prepare("UPDATE sessions SET expires_at = ? WHERE id = ?"),
  insertRecord: db.prepare("INSERT INTO records (id, tenant_id, collection, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"),
  recordById: db.prepare("SELECT * FROM records WHERE id = ?"),
  patchRecord: db.prepare("UPDATE records SET data = json_patch(data, ?), updated_at = ? WHERE id = ? RETURNING *"),
  byKey: db.prepare("SELECT id FROM records WHERE tenant_id = ? AND collection = ? AND json_extract(data, '$.key') = ?"),
  incrementUsage: db.prepare(
    "INSERT INTO usage (tenant_id, feature, period, count) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count",
  ).pluck(),
  insertFile: db.prepare("INSERT INTO files (id, tenant_id, size, mime, name, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
  fileById: db.prepare("SELECT * FROM files WHERE id = ?"),
};

// tenantd builds an index on its own for an undeclared field that lists filter on
// (src/db/sqlite/record-auto-indexes.ts), once the collection is large: the baseline gets the same
// index when its big collections are seeded, so the ratio measures overhead, not a missing index.
const AUTO_INDEXED = ["category", "phase"];
const autoIndex = () => {
  for (const field of AUTO_INDEXED) db.exec(`CREATE INDEX IF NOT EXISTS records_${field} ON records (tenant_id, collection, json_extract(data, '$.${field}'), created_at)`);
};

// One list statement per filtered field (the field name is part of the SQL, as in any JSON store).
// `scan`: the field's index is kept out (unary +), for collections where tenantd has none.
// The page's LIMIT is written into the SQL, as tenantd does: SQLite's planner reads a bound
// LIMIT, and a statement whose plan read a bound value is compiled again on every bind.
const listSql = (field, scan = false) => {
  const expr = `${scan ? "+" : ""}json_extract(data, '$.${field}')`;
  const pages = new Map();
  const sql = (limit) => `SELECT * FROM records WHERE tenant_id = ? AND collection = ? AND ${expr} = ? ORDER BY created_at DESC LIMIT ${limit}`;
  return {
    page: (limit) => pages.get(limit) ?? pages.set(limit, db.prepare(sql(limit))).get(limit),
    sql,
    count: db.prepare(`SELECT COUNT(*) AS n FROM records WHERE tenant_id = ? AND collection = ? AND ${expr} = ?`).pluck(),
  };
};
const lists = { status: listSql("status"), category: listSql("category"), state: listSql("state"), phase: listSql("phase") };
// tenantd builds no automatic index below 10,000 records in the asking tenant's collection.
const AUTO_COLLECTIONS = new Set([COLLECTIONS.big, COLLECTIONS.million]);
const scanLists = { category: listSql("category", true), phase: listSql("phase", true) };
// Totals counted once per (tenant, collection, field, value) until a record is written: the
// minimal form of tenantd's exact total cache.
const totals = new Map();
const forgetTotals = () => totals.clear();

const toRecord = (r) => ({ id: r.id, data: JSON.parse(r.data), createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString() });
const notFound = () => new HTTPError({ status: 404, message: "not found" });

function startSession(tenantId, now) {
  const sessionId = randomUUID();
  const refreshToken = token();
  db.transaction(() => {
    q.insertSession.run(sessionId, tenantId, now, now + 90 * DAY);
    q.insertRefresh.run(sha(refreshToken), sessionId, now);
  }).immediate();
  return { sessionId, refreshToken, accessToken: accessToken(tenantId, "raw", sessionId, now) };
}

const app = new H3();

app.post("/signup", async (event) => {
  const { email, password } = await event.req.json();
  const passwordHash = await hash(password, ARGON2);
  const id = randomUUID();
  const now = Date.now();
  q.insertTenant.run(id, email, passwordHash, now);
  event.res.status = 201;
  return { id, ...startSession(id, now) };
});

app.post("/login", async (event) => {
  const { email, password } = await event.req.json();
  const tenant = q.tenantByEmail.get(email);
  if (!tenant || !(await verify(tenant.password_hash, password))) throw new HTTPError({ status: 401, message: "wrong" });
  return { id: tenant.id, ...startSession(tenant.id, Date.now()) };
});

// Usage increments and refresh rotations commit together per turn, as tenantd's do.
const inTurn = turnCommit(db);

const rotate = db.transaction((oldHash, next, now) => {
  const row = q.byRefresh.get(oldHash);
  if (!row) return undefined;
  q.markRotated.run(now, oldHash);
  q.insertRefresh.run(next, row.id, now);
  q.extend.run(now + 90 * DAY, row.id);
  return row;
});
app.post("/refresh", async (event) => {
  const { refreshToken } = await event.req.json();
  const next = token();
  const now = Date.now();
  const row = await inTurn(() => rotate(sha(refreshToken), sha(next), now));
  if (!row) throw new HTTPError({ status: 401, message: "unknown" });
  return { accessToken: accessToken(row.tenant_id, "raw", row.id, now), refreshToken: next };
});

app.get("/tenants/:id", (event) => {
  const t = q.tenantById.get(getRouterParam(event, "id"));
  if (!t) throw notFound();
  return { tenant: { id: t.id, email: t.email, createdAt: new Date(t.created_at).toISOString() } };
});

app.post("/introspect/:sessionId", (event) => {
  const s = q.sessionById.get(getRouterParam(event, "sessionId"));
  return { active: !!s && s.ended_at === null && s.expires_at > Date.now(), tenantId: s?.tenant_id ?? null };
});

app.post("/records/:tenant/:collection/upsert", async (event) => {
  const { data } = await event.req.json();
  const tenant = getRouterParam(event, "tenant");
  const collection = getRouterParam(event, "collection");
  const now = Date.now();
  forgetTotals();
  const result = db.transaction(() => {
    const existing = q.byKey.get(tenant, collection, data.key);
    if (existing) return { record: toRecord(q.patchRecord.get(JSON.stringify(data), now, existing.id)), created: false };
    const id = randomUUID();
    q.insertRecord.run(id, tenant, collection, JSON.stringify(data), now, now);
    return { record: { id, data, createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString() }, created: true };
  }).immediate();
  event.res.status = result.created ? 201 : 200;
  return result;
});

app.post("/records/:tenant/:collection", async (event) => {
  const { data } = await event.req.json();
  const id = randomUUID();
  const now = Date.now();
  forgetTotals();
  q.insertRecord.run(id, getRouterParam(event, "tenant"), getRouterParam(event, "collection"), JSON.stringify(data), now, now);
  event.res.status = 201;
  return { record: { id, data, createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString() } };
});

app.get("/records/:tenant/:collection", (event) => {
  const query = getQuery(event);
  const collection = getRouterParam(event, "collection");
  const list = (!AUTO_COLLECTIONS.has(collection) && scanLists[query.field]) || lists[query.field];
  if (!list) throw new HTTPError({ status: 400, message: "field" });
  const limit = Number(query.limit ?? 50);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new HTTPError({ status: 400, message: "limit" });
  const args = [getRouterParam(event, "tenant"), getRouterParam(event, "collection"), query.value];
  const key = `${args.join("\u0000")}\u0000${query.field}`;
  let total = totals.get(key);
  if (total === undefined) totals.set(key, (total = list.count.get(...args)));
  return { records: list.page(limit).all(...args).map(toRecord), total, limit, offset: 0 };
});

// Issue 44's rows. A search: the full-text matches first (rowid), then their records in the
// tenant's collection, newest first or by bm25 (FTS5's own query as the outer loop, as tenantd
// reads a ranked page), the total counted once per (tenant, collection, word) as lists do.
const searchSql = {
  newest: db.prepare(`SELECT * FROM records WHERE rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?) AND +tenant_id = ? AND +collection = ? ORDER BY created_at DESC LIMIT 20`),
  ranked: db.prepare(`SELECT r.* FROM records_fts CROSS JOIN records r ON r.rowid = records_fts.rowid WHERE records_fts MATCH ? AND +r.tenant_id = ? AND +r.collection = ? ORDER BY bm25(records_fts), r.created_at DESC LIMIT 20`),
  count: db.prepare(`SELECT COUNT(*) FROM records WHERE rowid IN (SELECT rowid FROM records_fts WHERE records_fts MATCH ?) AND +tenant_id = ? AND +collection = ?`).pluck(),
};
app.get("/search/:tenant/:collection", (event) => {
  const { q: word, rank } = getQuery(event);
  const args = [`"${String(word).replaceAll('"', "")}"`, getRouterParam(event, "tenant"), getRouterParam(event, "collection")];
  const key = `search\u0000${args.join("\u0000")}`;
  let total = totals.get(key);
  if (total === undefined) totals.set(key, (total = searchSql.count.get(...args)));
  return { records: (rank ? searchSql.ranked : searchSql.newest).all(...args).map(toRecord), total, limit: 20, offset: 0 };
});

// A page of a whole collection, newest first, by keyset: `after` is the last record's
// "created_at.rowid" (the index on (tenant, collection, created_at) ends with the rowid).
const pageSql = (limit) => ({
  first: db.prepare(`SELECT rowid, * FROM records WHERE tenant_id = ? AND collection = ? ORDER BY created_at DESC, rowid DESC LIMIT ${limit}`),
  after: db.prepare(`SELECT rowid, * FROM records WHERE tenant_id = ? AND collection = ? AND (created_at, rowid) < (?, ?) ORDER BY created_at DESC, rowid DESC LIMIT ${limit}`),
});
const pages = new Map();
const countAll = db.prepare("SELECT COUNT(*) FROM records WHERE tenant_id = ? AND collection = ?").pluck();
app.get("/page/:tenant/:collection", (event) => {
  const { limit: l, after } = getQuery(event);
  const limit = Number(l ?? 50);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new HTTPError({ status: 400, message: "limit" });
  const stmts = pages.get(limit) ?? pages.set(limit, pageSql(limit)).get(limit);
  const args = [getRouterParam(event, "tenant"), getRouterParam(event, "collection")];
  const key = `page\u0000${args.join("\u0000")}`;
  let total = totals.get(key);
  if (total === undefined) totals.set(key, (total = countAll.get(...args)));
  const rows = after ? stmts.after.all(...args, ...String(after).split(".").map(Number)) : stmts.first.all(...args);
  const last = rows.at(-1);
  return { records: rows.map(toRecord), total, limit, ...(rows.length === limit ? { next: `${last.created_at}.${last.rowid}` } : {}) };
});

// A batch of creates: every insert in one transaction.
const insertBatch = db.transaction((tenant, collection, rows, now) => rows.map((data) => {
  const id = randomUUID();
  q.insertRecord.run(id, tenant, collection, JSON.stringify(data), now, now);
  return { status: 201, record: { id, data, createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString() } };
}));
app.post("/records/:tenant/:collection/batch", async (event) => {
  const { rows } = await event.req.json();
  forgetTotals();
  return { results: insertBatch(getRouterParam(event, "tenant"), getRouterParam(event, "collection"), rows, Date.now()) };
});

app.get("/records/:id", (event) => {
  const r = q.recordById.get(getRouterParam(event, "id"));
  if (!r) throw notFound();
  return { record: toRecord(r) };
});

app.put("/records/:id", async (event) => {
  const { data } = await event.req.json();
  forgetTotals();
  const [r] = q.patchRecord.all(JSON.stringify(data), Date.now(), getRouterParam(event, "id"));
  if (!r) throw notFound();
  return { record: toRecord(r) };
});

// A write with RETURNING is read with all(), not get() (here and in PUT /records/:id): SQLite
// checkpoints only when a statement steps to its end, so with get() and a commit per increment
// the WAL grew without bound during a measured round (90,000 increments: 371 MB against
// 4.1 MB), while tenantd pays for its checkpoints (docs/performance.md, fourteenth round).
// The increments now commit in the turn's transaction, whose COMMIT steps to its end.
app.post("/usage/:tenant/:feature/increment", async (event) => {
  const period = new Date().toISOString().slice(0, 7);
  const tenant = getRouterParam(event, "tenant");
  const feature = getRouterParam(event, "feature");
  const [count] = await inTurn(() => q.incrementUsage.all(tenant, feature, period));
  return { count, period: "monthly", limit: null };
});

app.post("/files/:tenant", async (event) => {
  const form = await event.req.formData();
  const file = form.get("file");
  if (!file || typeof file === "string") throw new HTTPError({ status: 400, message: "file part missing" });
  const id = randomUUID();
  await writeFile(join(dataDir, "files", id), new Uint8Array(await file.arrayBuffer()));
  q.insertFile.run(id, getRouterParam(event, "tenant"), file.size, file.type || "application/octet-stream", file.name, Date.now());
  event.res.status = 201;
  return { file: { id, url: `${baseUrl}/files/${id}`, sizeBytes: file.size } };
});

app.get("/files/:id", async (event) => {
  const row = q.fileById.get(getRouterParam(event, "id"));
  if (!row) throw notFound();
  return new Response(await readFile(join(dataDir, "files", row.id)), { headers: { "content-type": row.mime } });
});

const server = createServer(toNodeHandler(app));
const baseUrl = await listen(server);
// As tenantd does (src/http/tick-shape.ts): one live tick object, so that an idle spell (the
// other side seeding) cannot leave V8's stores of Node's tick objects generic here either.
let keptTick;
process.nextTick(() => (keptTick = executionAsyncResource()));

// Seeding straight into this server's schema, in transactions of 20,000 rows.
function seedRows(rows) {
  const insertMany = db.transaction((batch) => {
    for (const r of batch) q.insertRecord.run(...r);
  });
  for (let i = 0; i < rows.length; i += 20_000) insertMany(rows.slice(i, i + 20_000));
}
// As tenantd's seeding does: the load starts from a checkpointed WAL.
const checkpoint = () => db.pragma("wal_checkpoint(TRUNCATE)");

serveIpc({
  /** One tenant's collection of `count` records (record i = recordData(i)). */
  "seed.records": ({ tenantId, collection, count }) => {
    const started = Date.now();
    for (let from = 0; from < count; from += 100_000) {
      const rows = [];
      for (let i = from; i < Math.min(count, from + 100_000); i++) {
        const t = seedTime(i, count);
        rows.push([randomUUID(), tenantId, collection, JSON.stringify(recordData(i)), t, t]);
      }
      seedRows(rows);
    }
    autoIndex();
    forgetTotals();
    checkpoint();
    return { rows: count, ms: Date.now() - started };
  },
  /** The words of a tenant's collection (searchWordsSql), in one INSERT … SELECT. */
  "seed.search": ({ tenantId, collection }) => {
    const started = Date.now();
    const rows = db
      .prepare(`INSERT INTO records_fts (rowid, text) SELECT rowid, ${searchWordsSql((f) => `json_extract(data, '$.${f}')`)} FROM records WHERE tenant_id = ? AND collection = ?`)
      .run(tenantId, collection).changes;
    forgetTotals();
    checkpoint();
    return { rows, ms: Date.now() - started };
  },
  /** `tenants` tenants (the given real ones first, then synthetic ones) × `perTenant` records, interleaved in time. */
  "seed.spread": ({ realTenantIds, collection, tenants = SIZES.spreadTenants, perTenant = SIZES.perTenant }) => {
    const started = Date.now();
    const ids = [...realTenantIds];
    const now = Date.now();
    db.transaction(() => {
      for (let t = ids.length; t < tenants; t++) {
        const id = randomUUID();
        q.insertTenant.run(id, `seed${t}@bench.invalid`, null, now);
        ids.push(id);
      }
    })();
    const total = tenants * perTenant;
    for (let i = 0; i < perTenant; i++) {
      const rows = [];
      for (let t = 0; t < tenants; t++) {
        const at = seedTime(i * tenants + t, total);
        rows.push([randomUUID(), ids[t], collection, JSON.stringify(recordData(i)), at, at]);
      }
      seedRows(rows);
    }
    checkpoint();
    return { rows: total, ms: Date.now() - started };
  },
  explain: ({ tenantId, collection, field, value }) =>
    db.prepare(`EXPLAIN QUERY PLAN ${lists[field].sql(20)}`).all(tenantId, collection, value).map((r) => r.detail),
  shutdown,
});

let closing;
function shutdown() {
  closing ??= (async () => {
    await closeServer(server);
    await drain();
    db.close();
    rmSync(dataDir, { recursive: true, force: true });
  })();
  return closing;
}

process.send({ type: "ready", url: baseUrl, collections: COLLECTIONS });
