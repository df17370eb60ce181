// The raw PostgreSQL baseline: h3 v2 + postgres.js doing the same work per scenario as
// raw-server.mjs does on SQLite (same routes, same replies), on its own database of the
// PostgreSQL server tenantd-pg uses, with PostgreSQL's default settings. No auth, validation
// or tenancy checks: the ratio tenantd-pg / raw-pg is what tenantd costs on PostgreSQL.
// Settings come from the environment, never argv (the URL carries a password).
import { createServer } from "node:http";
import { executionAsyncResource } from "node:async_hooks";
import { mkdtempSync, rmSync, mkdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHash, randomBytes, randomUUID } from "node:crypto";
import postgres from "postgres";
import { H3, HTTPError, getRouterParam, getQuery } from "h3";
import { toNodeHandler } from "h3/node";
import * as argon2 from "@node-rs/argon2";
import { serveIpc, listen, closeServer, drain } from "./child-runtime.mjs";
import { seedTime, SIZES, COLLECTIONS } from "./dataset.mjs";
import { DATA_EXPR, TSVECTOR_EXPR, checkDataExpr, settleSeeded } from "./pg-clone-seed.mjs";
import { accessToken } from "./access-token.mjs";

const { BENCH_PG_URL: databaseUrl } = process.env;
if (!databaseUrl) throw new Error("raw-pg-server: BENCH_PG_URL must be set by the parent");

const ARGON2 = { memoryCost: 19456, timeCost: 2, parallelism: 1, algorithm: 2 };
const dataDir = mkdtempSync(join(tmpdir(), "tenantd-bench-rawpg-"));
mkdirSync(join(dataDir, "files"));

// The pool tenantd-pg uses by default (10 connections). postgres.js prepares every tagged
// query once per connection and reuses it; int8 (times in ms) comes back as a JS number.
const sql = postgres(databaseUrl, {
  max: 10,
  onnotice: () => {},
  types: { bigint: { to: 20, from: [20], serialize: (n) => String(n), parse: (s) => Number(s) } },
  connection: { application_name: "raw-pg" },
});

// `data` keeps the record's JSON as written and `doc` is its jsonb, as tenantd stores records
// on PostgreSQL; filters and indexes read `doc`. The same indexes as raw-server.mjs, on `doc`:
// the list and the declared fields, and the upsert's key (unique: the upsert is one statement).
await sql.unsafe(`
CREATE TABLE tenants (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, password_hash TEXT, created_at BIGINT NOT NULL);
CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL, ended_at BIGINT);
CREATE TABLE refresh_tokens (token_hash TEXT PRIMARY KEY, session_id TEXT NOT NULL, created_at BIGINT NOT NULL, rotated_at BIGINT);
CREATE TABLE records (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, collection TEXT NOT NULL, data TEXT NOT NULL,
  doc JSONB GENERATED ALWAYS AS (data::jsonb) STORED, created_at BIGINT NOT NULL, updated_at BIGINT NOT NULL);
CREATE INDEX records_list ON records (tenant_id, collection, created_at);
CREATE INDEX records_status ON records (tenant_id, collection, (doc ->> 'status'), created_at);
CREATE INDEX records_state ON records (tenant_id, collection, (doc ->> 'state'), created_at);
CREATE UNIQUE INDEX records_key ON records (tenant_id, collection, (doc ->> 'key'));
CREATE TABLE record_search (id TEXT PRIMARY KEY, tsv TSVECTOR NOT NULL);
CREATE INDEX record_search_words ON record_search USING GIN (tsv);
CREATE TABLE usage (tenant_id TEXT NOT NULL, feature TEXT NOT NULL, period TEXT NOT NULL, count BIGINT NOT NULL, PRIMARY KEY (tenant_id, feature, period));
CREATE TABLE files (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, size BIGINT NOT NULL, mime TEXT NOT NULL, name TEXT, created_at BIGINT NOT NULL);
`);

// Hashes still running when the server closes (a login storm's queue) finish before the pool
// ends, so their requests do not fail with CONNECTION_ENDED after the measurement.
const hashing = new Set();
const track = (p) => {
  hashing.add(p);
  return p.finally(() => hashing.delete(p));
};
const hash = (password, options) => track(argon2.hash(password, options));
const verify = (stored, password) => track(argon2.verify(stored, password));

const sha = (s) => createHash("sha256").update(s).digest("hex");
const token = () => randomBytes(32).toString("base64url");
const DAY = 86_400_000;
const RECORD = "id, data, created_at, updated_at";

// As raw-server.mjs: the big collections get an index on the undeclared fields once seeded,
// as tenantd builds one on its own; elsewhere those fields are filtered without an index.
const AUTO_INDEXED = ["category", "phase"];
const autoIndex = async () => {
  for (const field of AUTO_INDEXED) await sql.unsafe(`CREATE INDEX IF NOT EXISTS records_${field} ON records (tenant_id, collection, (doc ->> '${field}'), created_at)`);
};

// One list statement per filtered field and page size, prepared (the field name is part of
// the SQL, as in any JSON store). The LIMIT is written into the SQL, as raw-server.mjs does:
// a bound LIMIT would leave PostgreSQL's generic plan guessing the page size.
// `scan`: `|| ''` keeps the field's index out, for collections where tenantd has none.
const listSql = (field, scan = false) => {
  const where = `tenant_id = $1 AND collection = $2 AND (doc ->> '${field}')${scan ? " || ''" : ""} = $3`;
  const sqlOf = (limit) => `SELECT ${RECORD} FROM records WHERE ${where} ORDER BY created_at DESC LIMIT ${limit}`;
  return {
    sql: sqlOf,
    page: (limit, args) => sql.unsafe(sqlOf(limit), args, { prepare: true }),
    count: async (args) => (await sql.unsafe(`SELECT count(*)::int AS n FROM records WHERE ${where}`, args, { prepare: true }))[0].n,
  };
};
const lists = { status: listSql("status"), category: listSql("category"), state: listSql("state"), phase: listSql("phase") };
const AUTO_COLLECTIONS = new Set([COLLECTIONS.big, COLLECTIONS.million]);
const scanLists = { category: listSql("category", true), phase: listSql("phase", true) };
// Totals counted once per (tenant, collection, field, value) until a record is written: the
// same minimal total cache as raw-server.mjs.
const totals = new Map();
const forgetTotals = () => totals.clear();

const toRecord = (r) => ({ id: r.id, data: JSON.parse(r.data), createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString() });
const notFound = () => new HTTPError({ status: 404, message: "not found" });

// The session and its first refresh token in one transaction, both inserts sent at once.
async function startSession(tenantId, now) {
  const sessionId = randomUUID();
  const refreshToken = token();
  await sql.begin((tx) => [
    tx`INSERT INTO sessions (id, tenant_id, created_at, expires_at) VALUES (${sessionId}, ${tenantId}, ${now}, ${now + 90 * DAY})`,
    tx`INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (${sha(refreshToken)}, ${sessionId}, ${now})`,
  ]);
  return { sessionId, refreshToken, accessToken: accessToken(tenantId, "raw", sessionId, now) };
}

const app = new H3();

app.post("/signup", async (event) => {
  const { email, password } = await event.req.json();
  const passwordHash = await hash(password, ARGON2);
  const id = randomUUID();
  const now = Date.now();
  await sql`INSERT INTO tenants (id, email, password_hash, created_at) VALUES (${id}, ${email}, ${passwordHash}, ${now})`;
  event.res.status = 201;
  return { id, ...(await startSession(id, now)) };
});

app.post("/login", async (event) => {
  const { email, password } = await event.req.json();
  const [tenant] = await sql`SELECT id, password_hash FROM tenants WHERE email = ${email}`;
  if (!tenant || !(await verify(tenant.password_hash, password))) throw new HTTPError({ status: 401, message: "wrong" });
  return { id: tenant.id, ...(await startSession(tenant.id, Date.now())) };
});

// Each rotation commits on its own (tenantd-pg has no group commit): the token's row locked,
// then the three writes sent together, in one transaction.
app.post("/refresh", async (event) => {
  const { refreshToken } = await event.req.json();
  const oldHash = sha(refreshToken);
  const next = token();
  const now = Date.now();
  const row = await sql.begin(async (tx) => {
    const [r] = await tx`SELECT s.id, s.tenant_id, s.expires_at, s.ended_at, r.rotated_at FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id
      WHERE r.token_hash = ${oldHash} FOR NO KEY UPDATE OF r`;
    if (!r) return undefined;
    await Promise.all([
      tx`UPDATE refresh_tokens SET rotated_at = ${now} WHERE token_hash = ${oldHash}`,
      tx`INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (${sha(next)}, ${r.id}, ${now})`,
      tx`UPDATE sessions SET expires_at = ${now + 90 * DAY} WHERE id = ${r.id}`,
    ]);
    return r;
  });
  if (!row) throw new HTTPError({ status: 401, message: "unknown" });
  return { accessToken: accessToken(row.tenant_id, "raw", row.id, now), refreshToken: next };
});

app.get("/tenants/:id", async (event) => {
  const [t] = await sql`SELECT id, email, created_at FROM tenants WHERE id = ${getRouterParam(event, "id")}`;
  if (!t) throw notFound();
  return { tenant: { id: t.id, email: t.email, createdAt: new Date(t.created_at).toISOString() } };
});

app.post("/introspect/:sessionId", async (event) => {
  const [s] = await sql`SELECT tenant_id, expires_at, ended_at FROM sessions WHERE id = ${getRouterParam(event, "sessionId")}`;
  return { active: !!s && s.ended_at === null && s.expires_at > Date.now(), tenantId: s?.tenant_id ?? null };
});

// One statement: insert, or merge into the record holding the key (`xmax = 0`: inserted).
app.post("/records/:tenant/:collection/upsert", async (event) => {
  const { data } = await event.req.json();
  const now = Date.now();
  const text = JSON.stringify(data);
  forgetTotals();
  const [r] = await sql`INSERT INTO records (id, tenant_id, collection, data, created_at, updated_at)
    VALUES (${randomUUID()}, ${getRouterParam(event, "tenant")}, ${getRouterParam(event, "collection")}, ${text}, ${now}, ${now})
    ON CONFLICT (tenant_id, collection, (doc ->> 'key')) DO UPDATE SET data = (records.doc || ${text}::text::jsonb)::text, updated_at = ${now}
    RETURNING id, data, created_at, updated_at, (xmax = 0) AS created`;
  event.res.status = r.created ? 201 : 200;
  return { record: toRecord(r), created: r.created };
});

app.post("/records/:tenant/:collection", async (event) => {
  const { data } = await event.req.json();
  const id = randomUUID();
  const now = Date.now();
  forgetTotals();
  await sql`INSERT INTO records (id, tenant_id, collection, data, created_at, updated_at)
    VALUES (${id}, ${getRouterParam(event, "tenant")}, ${getRouterParam(event, "collection")}, ${JSON.stringify(data)}, ${now}, ${now})`;
  event.res.status = 201;
  return { record: { id, data, createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString() } };
});

app.get("/records/:tenant/:collection", async (event) => {
  const query = getQuery(event);
  const collection = getRouterParam(event, "collection");
  const list = (!AUTO_COLLECTIONS.has(collection) && scanLists[query.field]) || lists[query.field];
  if (!list) throw new HTTPError({ status: 400, message: "field" });
  const limit = Number(query.limit ?? 50);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new HTTPError({ status: 400, message: "limit" });
  const args = [getRouterParam(event, "tenant"), collection, String(query.value)];
  const key = `${args.join("\u0000")}\u0000${query.field}`;
  let total = totals.get(key);
  if (total === undefined) totals.set(key, (total = await list.count(args)));
  return { records: (await list.page(limit, args)).map(toRecord), total, limit, offset: 0 };
});

// Issue 44's rows, as raw-server.mjs. A search: the GIN index's matches joined to their
// records in the tenant's collection, newest first (`+ 0`: sorted, not read in the list
// index's order, which walks every record of the tenant for a rare word) or by ts_rank_cd
// (normalization 1, as tenantd-pg).
const SEARCHED = `FROM record_search s JOIN records r ON r.id = s.id WHERE s.tsv @@ $3::tsquery AND r.tenant_id = $1 AND r.collection = $2`;
app.get("/search/:tenant/:collection", async (event) => {
  const { q: word, rank } = getQuery(event);
  const args = [getRouterParam(event, "tenant"), getRouterParam(event, "collection"), `'${String(word).replaceAll("'", "")}'`];
  const key = `search\u0000${args.join("\u0000")}`;
  let total = totals.get(key);
  if (total === undefined) totals.set(key, (total = (await sql.unsafe(`SELECT count(*)::int AS n ${SEARCHED}`, args, { prepare: true }))[0].n));
  const order = rank ? "ts_rank_cd(s.tsv, $3::tsquery, 1) DESC, r.created_at DESC" : "r.created_at + 0 DESC";
  const rows = await sql.unsafe(`SELECT r.id, r.data, r.created_at, r.updated_at ${SEARCHED} ORDER BY ${order} LIMIT 20`, args, { prepare: true });
  return { records: rows.map(toRecord), total, limit: 20, offset: 0 };
});

// A page of a whole collection, newest first, by keyset: `after` is the last record's
// "created_at.id"; `created_at <= $3` lets the list index bound the range.
app.get("/page/:tenant/:collection", async (event) => {
  const { limit: l, after } = getQuery(event);
  const limit = Number(l ?? 50);
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > 1000) throw new HTTPError({ status: 400, message: "limit" });
  const args = [getRouterParam(event, "tenant"), getRouterParam(event, "collection")];
  const key = `page\u0000${args.join("\u0000")}`;
  let total = totals.get(key);
  if (total === undefined) totals.set(key, (total = (await sql.unsafe(`SELECT count(*)::int AS n FROM records WHERE tenant_id = $1 AND collection = $2`, args, { prepare: true }))[0].n));
  const cut = after ? String(after).indexOf(".") : -1;
  const rows = after
    ? await sql.unsafe(
        `SELECT ${RECORD} FROM records WHERE tenant_id = $1 AND collection = $2 AND created_at <= $3 AND (created_at < $3 OR id < $4) ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
        [...args, Number(String(after).slice(0, cut)), String(after).slice(cut + 1)],
        { prepare: true },
      )
    : await sql.unsafe(`SELECT ${RECORD} FROM records WHERE tenant_id = $1 AND collection = $2 ORDER BY created_at DESC, id DESC LIMIT ${limit}`, args, { prepare: true });
  const last = rows.at(-1);
  return { records: rows.map(toRecord), total, limit, ...(rows.length === limit ? { next: `${last.created_at}.${last.id}` } : {}) };
});

// A batch of creates: one multi-row INSERT in one transaction.
app.post("/records/:tenant/:collection/batch", async (event) => {
  const { rows } = await event.req.json();
  const now = Date.now();
  forgetTotals();
  const made = rows.map((data) => ({ id: randomUUID(), tenant_id: getRouterParam(event, "tenant"), collection: getRouterParam(event, "collection"), data: JSON.stringify(data), created_at: now, updated_at: now }));
  await sql.begin((tx) => tx`INSERT INTO records ${tx(made, "id", "tenant_id", "collection", "data", "created_at", "updated_at")}`);
  const at = new Date(now).toISOString();
  return { results: made.map((r, i) => ({ status: 201, record: { id: r.id, data: rows[i], createdAt: at, updatedAt: at } })) };
});

app.get("/records/:id", async (event) => {
  const [r] = await sql`SELECT id, data, created_at, updated_at FROM records WHERE id = ${getRouterParam(event, "id")}`;
  if (!r) throw notFound();
  return { record: toRecord(r) };
});

// A merge of the patch's top-level keys (`||`), which is RFC 7396's merge patch for the flat
// patches the scenarios send (raw-server.mjs uses SQLite's json_patch).
app.put("/records/:id", async (event) => {
  const { data } = await event.req.json();
  forgetTotals();
  const [r] = await sql`UPDATE records SET data = (doc || ${JSON.stringify(data)}::text::jsonb)::text, updated_at = ${Date.now()}
    WHERE id = ${getRouterParam(event, "id")} RETURNING id, data, created_at, updated_at`;
  if (!r) throw notFound();
  return { record: toRecord(r) };
});

app.post("/usage/:tenant/:feature/increment", async (event) => {
  const period = new Date().toISOString().slice(0, 7);
  const [{ count }] = await sql`INSERT INTO usage (tenant_id, feature, period, count) VALUES (${getRouterParam(event, "tenant")}, ${getRouterParam(event, "feature")}, ${period}, 1)
    ON CONFLICT (tenant_id, feature, period) DO UPDATE SET count = usage.count + 1 RETURNING count`;
  return { count, period: "monthly", limit: null };
});

app.post("/files/:tenant", async (event) => {
  const form = await event.req.formData();
  const file = form.get("file");
  if (!file || typeof file === "string") throw new HTTPError({ status: 400, message: "file part missing" });
  const id = randomUUID();
  await writeFile(join(dataDir, "files", id), new Uint8Array(await file.arrayBuffer()));
  await sql`INSERT INTO files (id, tenant_id, size, mime, name, created_at)
    VALUES (${id}, ${getRouterParam(event, "tenant")}, ${file.size}, ${file.type || "application/octet-stream"}, ${file.name}, ${Date.now()})`;
  event.res.status = 201;
  return { file: { id, url: `${baseUrl}/files/${id}`, sizeBytes: file.size } };
});

app.get("/files/:id", async (event) => {
  const [row] = await sql`SELECT id, mime FROM files WHERE id = ${getRouterParam(event, "id")}`;
  if (!row) throw notFound();
  return new Response(await readFile(join(dataDir, "files", row.id)), { headers: { "content-type": row.mime } });
});

const server = createServer(toNodeHandler(app));
const baseUrl = await listen(server);
// As raw-server.mjs and tenantd (src/http/tick-shape.ts): one live tick object.
let keptTick;
process.nextTick(() => (keptTick = executionAsyncResource()));

// Seeding in PostgreSQL itself, as pg-clone-seed.mjs does for tenantd: `INSERT … SELECT` over
// generate_series, 100,000 rows a statement, the JSON built by the SQL checked against
// dataset.mjs, then VACUUM (ANALYZE) and CHECKPOINT as that seeder does (settleSeeded).
const CHUNK = 100_000;

serveIpc({
  /** One tenant's collection of `count` records (record i = recordData(i), at seedTime(i, count)). */
  "seed.records": async ({ tenantId, collection, count }) => {
    const started = Date.now();
    await checkDataExpr(sql);
    const end = seedTime(count, count);
    for (let from = 0; from < count; from += CHUNK) {
      await sql.unsafe(
        `INSERT INTO records (id, tenant_id, collection, data, created_at, updated_at)
         SELECT gen_random_uuid()::text, $1, $2, ${DATA_EXPR("i")}, $3::bigint - ($4::bigint - i), $3::bigint - ($4::bigint - i)
         FROM generate_series($5::bigint, $6::bigint) AS g(i)`,
        [tenantId, collection, end, count, from, Math.min(count, from + CHUNK) - 1],
      );
    }
    const insertMs = Date.now() - started;
    const indexStarted = Date.now();
    await autoIndex();
    const autoIndexMs = Date.now() - indexStarted;
    forgetTotals();
    const steps = await settleSeeded(sql, ["records"]);
    return { rows: count, ms: Date.now() - started, steps: { insertMs, autoIndexMs, ...steps } };
  },
  /** The words of a tenant's collection with positions (TSVECTOR_EXPR), in one INSERT … SELECT. */
  "seed.search": async ({ tenantId, collection }) => {
    const started = Date.now();
    const { count } = await sql.unsafe(`INSERT INTO record_search (id, tsv) SELECT id, ${TSVECTOR_EXPR("doc")} FROM records WHERE tenant_id = $1 AND collection = $2`, [tenantId, collection]);
    const insertMs = Date.now() - started;
    forgetTotals();
    const steps = await settleSeeded(sql, ["record_search"]);
    return { rows: count, ms: Date.now() - started, steps: { insertMs, ...steps } };
  },
  /** `tenants` tenants (the given real ones first, then synthetic ones) × `perTenant` records, interleaved in time. */
  "seed.spread": async ({ realTenantIds, collection, tenants = SIZES.spreadTenants, perTenant = SIZES.perTenant }) => {
    const started = Date.now();
    await checkDataExpr(sql);
    const synthetic = await sql.unsafe(
      `INSERT INTO tenants (id, email, password_hash, created_at)
       SELECT gen_random_uuid()::text, 'seed' || t || '@bench.invalid', NULL, $1::bigint FROM generate_series($2::bigint, $3::bigint) AS g(t) ORDER BY t RETURNING id`,
      [Date.now(), realTenantIds.length, tenants - 1],
    );
    const ids = [...realTenantIds, ...synthetic.map((r) => r.id)];
    const total = ids.length * perTenant;
    const end = seedTime(total, total);
    // Record i of tenant k (k from 1) is number i * tenants + k - 1 of the whole set, as in raw-server.mjs.
    const step = Math.max(1, Math.floor(CHUNK / ids.length));
    for (let from = 0; from < perTenant; from += step) {
      await sql.unsafe(
        `INSERT INTO records (id, tenant_id, collection, data, created_at, updated_at)
         SELECT gen_random_uuid()::text, u.tenant, $1, ${DATA_EXPR("i")}, $2::bigint - ($3::bigint - (i * $4::bigint + u.k - 1)), $2::bigint - ($3::bigint - (i * $4::bigint + u.k - 1))
         FROM generate_series($5::bigint, $6::bigint) AS g(i), unnest($7::text[]) WITH ORDINALITY AS u(tenant, k)`,
        [collection, end, total, ids.length, from, Math.min(perTenant, from + step) - 1, ids],
      );
    }
    const insertMs = Date.now() - started;
    forgetTotals();
    const steps = await settleSeeded(sql, ["records", "tenants"]);
    return { rows: total, ms: Date.now() - started, steps: { insertMs, ...steps } };
  },
  /** PostgreSQL's EXPLAIN of the page query a list of 20 runs. */
  explain: async ({ tenantId, collection, field, value }) => {
    const list = (!AUTO_COLLECTIONS.has(collection) && scanLists[field]) || lists[field];
    return (await sql.unsafe(`EXPLAIN ${list.sql(20)}`, [tenantId, collection, value])).map((r) => r["QUERY PLAN"]);
  },
  shutdown,
});

let closing;
function shutdown() {
  closing ??= (async () => {
    await closeServer(server);
    await drain();
    await Promise.race([Promise.allSettled([...hashing]), new Promise((r) => setTimeout(r, 10_000))]);
    await drain(200);
    await sql.end({ timeout: 5 });
    rmSync(dataDir, { recursive: true, force: true });
  })();
  return closing;
}

process.send({ type: "ready", url: baseUrl, collections: COLLECTIONS });
