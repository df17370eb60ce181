// One server alone, for counting its instructions per request under callgrind (count.sh):
// `node server.mjs tenantd|raw <scenario>` sets up in process, prints {port, request} as one
// JSON line and serves until killed. The raw side is the bench's baseline SQL for the same
// scenario, as in raw-server.mjs.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import Database from "better-sqlite3";
import { H3, getQuery, getRouterParam } from "h3";
import { toNodeHandler } from "h3/node";
import { createTenantBackend } from "../../dist/index.js";
import { COLLECTIONS, COLLECTION_SETTINGS, FILTERS, recordData } from "../dataset.mjs";
import { turnCommit } from "../turn-commit.mjs";
import { accessToken } from "../access-token.mjs";

const [kind = "tenantd", scenario = "me"] = process.argv.slice(2);
const sha = (text) => createHash("sha256").update(text).digest("hex");
// The "-8" lists: one tenant's 100 records of 8 tenants, asked for in turn.
const TENANTS = 8;
const dir = mkdtempSync(join(tmpdir(), "tenantd-instructions-"));

async function tenantd() {
  const backend = await createTenantBackend({ dataDir: dir, logger: "error", rateLimit: false });
  const app = backend.defaultApp;
  const call = async (method, path, headers, body) =>
    (await backend.fetch(new Request(`http://localhost${path}`, { method, headers: body ? { ...headers, "content-type": "application/json" } : headers, body }))).json();
  const s = await call("POST", "/api/v1/auth/signup", { "x-service-key": app.publishableKey }, JSON.stringify({ email: "a@example.com", password: "a long password 1" }));
  const bearer = { authorization: `Bearer ${s.accessToken}`, "x-service-app": app.id };
  const rec = await call("POST", "/api/v1/data/notes", bearer, JSON.stringify({ data: { title: "x", n: 1 } }));
  // The list scenarios: one tenant's 100 records in the 10,000-tenant bench's collection.
  await backend.admin.updateApp(app.id, { settings: { collections: COLLECTION_SETTINGS } });
  for (let i = 0; i < 100; i++) await call("POST", `/api/v1/data/${COLLECTIONS.spread}`, bearer, JSON.stringify({ data: recordData(i) }));
  const list = (filter) => ["GET", `/api/v1/data/${COLLECTIONS.spread}?filter=${encodeURIComponent(JSON.stringify(filter))}&limit=20`, bearer];
  // The bench's lists over 10,000 tenants send the tokens of 8 tenants in turn: 7 more here.
  const turns = [bearer];
  if (scenario.endsWith("-8")) {
    for (let t = 2; t <= TENANTS; t++) {
      const o = await call("POST", "/api/v1/auth/signup", { "x-service-key": app.publishableKey }, JSON.stringify({ email: `t${t}@example.com`, password: "a long password 1" }));
      const b = { authorization: `Bearer ${o.accessToken}`, "x-service-app": app.id };
      for (let i = 0; i < 100; i++) await call("POST", `/api/v1/data/${COLLECTIONS.spread}`, b, JSON.stringify({ data: recordData(i) }));
      turns.push(b);
    }
  }
  const eachTenant = (filter) => turns.map((b) => { const [m, p] = list(filter); return [m, p, b]; });
  const requests = {
    me: ["GET", "/api/v1/auth/me", bearer],
    get: ["GET", `/api/v1/data/notes/${rec.record.id}`, bearer],
    usage: ["POST", "/api/v1/billing/usage/benchcalls/increment", bearer, "{}"],
    introspect: ["POST", "/api/v1/auth/introspect", { "x-service-key": app.publishableKey, authorization: bearer.authorization }, "{}"],
    "list-indexed": list(FILTERS.indexed),
    "list-unindexed": list(FILTERS.unindexed),
    "list-indexed-8": eachTenant(FILTERS.indexed),
    "list-unindexed-8": eachTenant(FILTERS.unindexed),
    // The fifth element names the reply's field the next request sends (client.mjs): a chain.
    refresh: ["POST", "/api/v1/auth/refresh", { "x-service-key": app.publishableKey }, JSON.stringify({ refreshToken: s.refreshToken }), "refreshToken"],
    // The same key each time: every request after the first updates one record, on both sides.
    upsert: ["POST", `/api/v1/data/${COLLECTIONS.upsert}/upsert`, bearer, JSON.stringify({ data: { key: "k1", n: 1 } })],
    // A record write nobody streams (issue 41's "a write pays <= 2 µs more"): REALTIME=off
    // takes the hub away, so the write's realtime hook returns at once, for the pair.
    create: ["POST", "/api/v1/data/notes", bearer, JSON.stringify({ data: { title: "x", n: 1 } })],
  };
  if (process.env.REALTIME === "off") backend.core.realtime = undefined;
  return { handler: toNodeHandler(backend), request: requests[scenario] };
}

function raw() {
  const db = new Database(join(dir, "raw.db"));
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  db.exec(`CREATE TABLE tenants (id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, password_hash TEXT, created_at INTEGER NOT NULL);
    CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, created_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, ended_at INTEGER);
    CREATE TABLE records (id TEXT PRIMARY KEY, tenant_id TEXT NOT NULL, collection TEXT NOT NULL, data TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
    CREATE INDEX records_list ON records (tenant_id, collection, created_at);
    CREATE INDEX records_status ON records (tenant_id, collection, json_extract(data, '$.status'), created_at);
    CREATE INDEX records_key ON records (tenant_id, collection, json_extract(data, '$.key'));
    CREATE TABLE refresh_tokens (token_hash TEXT PRIMARY KEY, session_id TEXT NOT NULL, created_at INTEGER NOT NULL, rotated_at INTEGER);
    CREATE TABLE usage (tenant_id TEXT NOT NULL, feature TEXT NOT NULL, period TEXT NOT NULL, count INTEGER NOT NULL, PRIMARY KEY (tenant_id, feature, period));
    INSERT INTO tenants VALUES ('t1', 'a@example.com', 'x', 1);
    INSERT INTO sessions VALUES ('s1', 't1', 1, 99999999999999, NULL);
    INSERT INTO refresh_tokens VALUES ('${sha("rt0")}', 's1', 1, NULL);`);
  const q = {
    tenant: db.prepare("SELECT id, email, created_at FROM tenants WHERE id = ?"),
    session: db.prepare("SELECT * FROM sessions WHERE id = ?"),
    // As raw-server.mjs: the declared field through its index, the other one scanned (no automatic index below 10,000 records).
    list: {
      status: db.prepare("SELECT * FROM records WHERE tenant_id = ? AND collection = ? AND json_extract(data, '$.status') = ? ORDER BY created_at DESC LIMIT 20"),
      category: db.prepare("SELECT * FROM records WHERE tenant_id = ? AND collection = ? AND +json_extract(data, '$.category') = ? ORDER BY created_at DESC LIMIT 20"),
    },
    count: {
      status: db.prepare("SELECT COUNT(*) FROM records WHERE tenant_id = ? AND collection = ? AND json_extract(data, '$.status') = ?").pluck(),
      category: db.prepare("SELECT COUNT(*) FROM records WHERE tenant_id = ? AND collection = ? AND +json_extract(data, '$.category') = ?").pluck(),
    },
    increment: db.prepare("INSERT INTO usage (tenant_id, feature, period, count) VALUES (?, ?, ?, 1) ON CONFLICT DO UPDATE SET count = count + 1 RETURNING count").pluck(),
  };
  // As raw-server.mjs's /refresh.
  const rotation = {
    byRefresh: db.prepare("SELECT s.*, r.rotated_at FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token_hash = ?"),
    markRotated: db.prepare("UPDATE refresh_tokens SET rotated_at = ? WHERE token_hash = ?"),
    insertRefresh: db.prepare("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)"),
    extend: db.prepare("UPDATE sessions SET expires_at = ? WHERE id = ?"),
  };
  const rotate = db.transaction((oldHash, next, now) => {
    const row = rotation.byRefresh.get(oldHash);
    if (!row) return undefined;
    rotation.markRotated.run(now, oldHash);
    rotation.insertRefresh.run(next, row.id, now);
    rotation.extend.run(now + 90 * 86_400_000, row.id);
    return row;
  });
  const insert = db.prepare("INSERT INTO records VALUES (?, ?, ?, ?, ?, ?)");
  for (let t = 1; t <= TENANTS; t++) for (let i = 0; i < 100; i++) insert.run(t === 1 ? `r${i}` : `r${t}-${i}`, `t${t}`, COLLECTIONS.spread, JSON.stringify(recordData(i)), 1000 + i, 1000 + i);
  const totals = new Map();
  const toRecord = (r) => ({ id: r.id, data: JSON.parse(r.data), createdAt: new Date(r.created_at).toISOString(), updatedAt: new Date(r.updated_at).toISOString() });
  const app = new H3();
  app.get("/records/:tenant/:collection", (event) => {
    const query = getQuery(event);
    const args = [getRouterParam(event, "tenant"), getRouterParam(event, "collection"), query.value];
    const key = `${args.join("\u0000")}\u0000${query.field}`;
    let total = totals.get(key);
    if (total === undefined) totals.set(key, (total = q.count[query.field].get(...args)));
    return { records: q.list[query.field].all(...args).map(toRecord), total, limit: Number(query.limit), offset: 0 };
  });
  const recordById = db.prepare("SELECT * FROM records WHERE id = ?");
  // As raw-server.mjs's upsert.
  const byKey = db.prepare("SELECT id FROM records WHERE tenant_id = ? AND collection = ? AND json_extract(data, '$.key') = ?");
  const patchRecord = db.prepare("UPDATE records SET data = json_patch(data, ?), updated_at = ? WHERE id = ? RETURNING *");
  app.post("/records/:tenant/:collection/upsert", async (event) => {
    const { data } = await event.req.json();
    const [tenant, collection] = [getRouterParam(event, "tenant"), getRouterParam(event, "collection")];
    const now = Date.now();
    totals.clear();
    const result = db.transaction(() => {
      const existing = byKey.get(tenant, collection, data.key);
      if (existing) return { record: toRecord(patchRecord.get(JSON.stringify(data), now, existing.id)), created: false };
      const id = randomBytes(16).toString("hex");
      insert.run(id, tenant, collection, JSON.stringify(data), now, now);
      return { record: { id, data, createdAt: new Date(now).toISOString(), updatedAt: new Date(now).toISOString() }, created: true };
    }).immediate();
    event.res.status = result.created ? 201 : 200;
    return result;
  });
  app.get("/records/:id", (event) => ({ record: toRecord(recordById.get(getRouterParam(event, "id"))) }));
  app.get("/tenants/:id", (event) => {
    const t = q.tenant.get(getRouterParam(event, "id"));
    return { tenant: { id: t.id, email: t.email, createdAt: new Date(t.created_at).toISOString() } };
  });
  app.post("/introspect/:sessionId", (event) => {
    const s = q.session.get(getRouterParam(event, "sessionId"));
    return { active: !!s && s.ended_at === null && s.expires_at > Date.now(), tenantId: s?.tenant_id ?? null };
  });
  // Increments and rotations commit per turn of the event loop, as in raw-server.mjs.
  const inTurn = turnCommit(db);
  app.post("/usage/:tenant/:feature/increment", async (event) => {
    const [tenant, feature] = [getRouterParam(event, "tenant"), getRouterParam(event, "feature")];
    const [count] = await inTurn(() => q.increment.all(tenant, feature, new Date().toISOString().slice(0, 7)));
    return { count, period: "monthly", limit: null };
  });
  app.post("/refresh", async (event) => {
    const { refreshToken } = await event.req.json();
    const next = randomBytes(32).toString("base64url");
    const now = Date.now();
    const row = await inTurn(() => rotate(sha(refreshToken), sha(next), now));
    if (!row) throw new Error("unknown refresh token");
    return { accessToken: accessToken(row.tenant_id, "raw", row.id, now), refreshToken: next };
  });
  // The same headers as tenantd's requests carry, so both parse the same request size.
  const headers = { authorization: `Bearer ${"x".repeat(280)}`, "x-service-app": "app_h3g75lgcso446o2l" };
  const rawList = (filter, tenant = "t1") => {
    const [[field, value]] = Object.entries(filter);
    return ["GET", `/records/${tenant}/${COLLECTIONS.spread}?field=${field}&value=${value}&limit=20`, headers];
  };
  const eachTenant = (filter) => Array.from({ length: TENANTS }, (_, t) => rawList(filter, `t${t + 1}`));
  const requests = { get: ["GET", "/records/r7", headers], "list-indexed": rawList(FILTERS.indexed), "list-unindexed": rawList(FILTERS.unindexed), "list-indexed-8": eachTenant(FILTERS.indexed), "list-unindexed-8": eachTenant(FILTERS.unindexed), me: ["GET", "/tenants/t1", headers], introspect: ["POST", "/introspect/s1", headers, "{}"], usage: ["POST", "/usage/t1/benchcalls/increment", headers, "{}"], refresh: ["POST", "/refresh", {}, JSON.stringify({ refreshToken: "rt0" }), "refreshToken"], upsert: ["POST", `/records/t1/${COLLECTIONS.upsert}/upsert`, headers, JSON.stringify({ data: { key: "k1", n: 1 } })] };
  return { handler: toNodeHandler(app), request: requests[scenario] };
}

const { handler, request } = kind === "raw" ? raw() : await tenantd();
if (!request) throw new Error(`no scenario ${scenario} for ${kind}`);
const server = createServer(handler);
server.listen(0, "127.0.0.1", () => process.stdout.write(`${JSON.stringify({ port: server.address().port, request })}\n`));
