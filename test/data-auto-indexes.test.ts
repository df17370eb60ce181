import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createAutoIndexes, AUTO_INDEX, MAX_REFUSED_PER_APP } from "../src/db/sqlite/record-auto-indexes.ts";
import { createFieldIndexes } from "../src/db/sqlite/record-field-index.ts";
import { openDatabase } from "../src/db/sqlite/connection.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";
import { recordScope } from "../src/data/records.ts";
import type { TenantAuth } from "../src/http/guards.ts";
import { createTenantBackend } from "../src/index.ts";
import { testStoreConfig } from "./_postgres.ts";
import { afterThisTest, buildRequest, developerSession, expectError, TEST_ARGON2, serveHttp, signupTenant, toReply, type TestTenant } from "./_helpers.ts";
import { dataBackend, dataClient, listPath } from "./data-helpers.ts";

type Backend = Awaited<ReturnType<typeof dataBackend>>;

/** The app's complete automatic indexes, as field paths. */
const autoIndexFields = (b: Backend, appId = b.t.app.id) =>
  b.t.backend.core.sqlite.prepare("SELECT path FROM record_field_indexes WHERE app_id = ? AND declared = 0 AND build_to IS NULL ORDER BY path").pluck().all(appId) as string[];
const settled = (b: Backend) => b.t.backend.core.db.records.autoIndexesSettled();

/**
 * Writes `n` records of the tenant straight into SQLite (the API would take minutes):
 * record i is { status: "s<i % 10>", n: i }, created i ms after the clock's start.
 */
function seed(b: Backend, collection: string, n: number, tenantId = b.tenant.id, appId = b.t.app.id) {
  const start = b.t.clock();
  b.t.backend.core.sqlite
    .prepare(
      `WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < ?)
       INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
       SELECT 'rec_seed_' || ? || '_' || ? || '_' || x, ?, ?, ?, json_object('status', 's' || (x % 10), 'n', x), ? + x, ? + x FROM i`,
    )
    .run(n, tenantId, collection, appId, tenantId, collection, start, start);
}

/** `count` tenants of the app (the backend's own first), each holding `rows` records of the collection. */
async function largeTenants(b: Backend, collection: string, count: number = AUTO_INDEX.minTenants, rows: number = AUTO_INDEX.minRows): Promise<TestTenant[]> {
  const tenants = [b.tenant];
  while (tenants.length < count) tenants.push(await signupTenant(b.t));
  for (const t of tenants) seed(b, collection, rows, t.id);
  return tenants;
}

async function plan(b: Backend, collection: string, filter: unknown, sort?: unknown, tenantId = b.tenant.id): Promise<string> {
  const core = b.t.backend.core;
  const app = (await core.db.apps.findById(b.t.app.id))!;
  const { scope } = recordScope({ app, tenantId } as TenantAuth, collection);
  const detail = await core.db.records.explainList(scope, parseFilter(JSON.stringify(filter)), parseSort(sort === undefined ? undefined : JSON.stringify(sort)));
  return detail.join("\n");
}
const THROUGH_INDEX = /^SEARCH e USING COVERING INDEX record_field_entries_value/;

const ids = (res: { body: { records: { id: string }[] } }) => res.body.records.map((r) => r.id);

// SQLite's mechanism (per-field indexes beside the table, built in chunks), so the sqlite
// project only (vitest.config.ts); PostgreSQL's, built CONCURRENTLY, are in postgres-auto-indexes.test.ts.
describe("automatic indexes", () => {
  it("builds an index once several tenants with large collections list on a field, uses it, answers the same, and shows it to the admin", async () => {
    const b = await dataBackend();
    const tenants = await largeTenants(b, "items");
    const before = await b.api.list("items", { filter: { status: "s3" }, limit: 7, offset: 2 });
    expect(before.status).toBe(200);
    expect(before.body.total).toBe(AUTO_INDEX.minRows / 10);

    // Each tenant but the last asks; no build yet.
    for (const t of tenants.slice(1, -1)) expect((await dataClient(b.t, t).list("items", { filter: { status: "s3" } })).status).toBe(200);
    await settled(b);
    expect(autoIndexFields(b)).toEqual([]);
    expect(await plan(b, "items", { status: "s3" })).not.toMatch(THROUGH_INDEX);

    await dataClient(b.t, tenants.at(-1)!).list("items", { filter: { status: "s3" } });
    await settled(b);
    expect(autoIndexFields(b)).toEqual(["status"]);
    expect(await plan(b, "items", { status: "s3" })).toMatch(THROUGH_INDEX);
    expect(await plan(b, "items", { status: { $in: ["s1", "s2"] } }, { status: -1 })).toMatch(THROUGH_INDEX);

    const after = await b.api.list("items", { filter: { status: "s3" }, limit: 7, offset: 2 });
    expect(ids(after)).toEqual(ids(before));
    expect(after.body.total).toBe(before.body.total);
    // A range and a sort on the field, through the index, in MongoDB order.
    const sorted = await b.api.list("items", { filter: { status: { $gte: "s8" } }, sort: { status: -1, n: 1 }, limit: 3 });
    expect(sorted.body.records.map((r: { data: { status: string; n: number } }) => [r.data.status, r.data.n])).toEqual([
      ["s9", 9],
      ["s9", 19],
      ["s9", 29],
    ]);

    const token = await developerSession(b.t);
    const res = await b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes`, { developer: token });
    expect(res.status).toBe(200);
    expect(res.body.declared).toEqual([]);
    expect(res.body.automatic).toEqual([
      expect.objectContaining({ collection: "items", field: "status", state: "ready", reason: null, rows: 3 * AUTO_INDEX.minRows, createdAt: expect.any(String) }),
    ]);
    const other = await b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes`);
    expect(other.status).toBe(401);
  });

  it("never builds for one tenant alone, however large its collection and however often it lists (issue 39 item 2)", async () => {
    const b = await dataBackend();
    seed(b, "items", 5 * AUTO_INDEX.minRows);
    for (let i = 0; i < 5; i++) {
      for (const field of ["status", "n", "other"]) expect((await b.api.list("items", { filter: { [field]: { $gte: "s5" } }, limit: 1 })).status).toBe(200);
      expect((await b.api.list("items", { sort: { n: -1 }, limit: 1 })).status).toBe(200);
      // Past the recheck, over a day: the same tenant asking again still counts once.
      b.t.clock.advance(AUTO_INDEX.recheckMs + 3600 * 1000);
      const login = await b.t.request("POST", "/api/v1/auth/login", { key: b.t.app.publishableKey, body: { email: b.tenant.email, password: "correct horse battery" } });
      b.api = dataClient(b.t, { bearer: { accessToken: login.body.accessToken, appId: b.t.app.id } });
    }
    await settled(b);
    expect(autoIndexFields(b)).toEqual([]);
    expect(await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).toEqual([]);
  });

  it("builds nothing for small collections or a $ne filter", async () => {
    const b = await dataBackend();
    const tenants = await largeTenants(b, "items");
    for (const t of tenants) seed(b, "small", 50, t.id);
    for (const t of tenants) {
      const api = dataClient(b.t, t);
      expect((await api.list("small", { filter: { status: "s1" } })).body.total).toBe(5);
      expect((await api.list("items", { filter: { status: { $ne: "s1" } }, limit: 1 })).body.total).toBe(AUTO_INDEX.minRows * 0.9);
    }
    await settled(b);
    expect(autoIndexFields(b)).toEqual([]);
  });

  it("drops an automatic index no list used for a week; one whose field becomes declared is the declared index as it is", async () => {
    const b = await dataBackend();
    const tenants = await largeTenants(b, "items");
    for (const t of tenants) {
      await dataClient(b.t, t).list("items", { filter: { status: "s1" }, limit: 1 });
      await dataClient(b.t, t).list("items", { sort: { n: -1 }, limit: 1 });
    }
    await settled(b);
    expect(autoIndexFields(b)).toEqual(["n", "status"]);

    // Six days on, `n` is used again; a day and an hour later, only `status` has been idle a week.
    // (Access tokens last 15 minutes: each step signs in again.)
    const later = async (ms: number) => {
      b.t.clock.advance(ms);
      const login = await b.t.request("POST", "/api/v1/auth/login", { key: b.t.app.publishableKey, body: { email: b.tenant.email, password: "correct horse battery" } });
      return dataClient(b.t, { bearer: { accessToken: login.body.accessToken, appId: b.t.app.id } });
    };
    expect((await (await later(6 * 24 * 3600 * 1000)).list("items", { filter: { n: { $gt: 5 } }, limit: 1 })).status).toBe(200);
    expect((await (await later(25 * 3600 * 1000)).list("items", { limit: 1 })).status).toBe(200);
    await settled(b);
    const token = await developerSession(b.t);
    const listed = async () => (await b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes`, { developer: token })).body;
    expect((await listed()).automatic.map((i: { field: string }) => i.field)).toEqual(["n"]);
    expect(autoIndexFields(b)).toEqual(["n"]);

    const ix = b.t.backend.core.sqlite.prepare("SELECT ix FROM record_field_indexes WHERE path = 'n'").pluck().get();
    await b.t.backend.admin.updateApp(b.t.app.id, { settings: { collections: { items: { indexed: ["n"] } } } });
    expect(autoIndexFields(b)).toEqual([]);
    expect(await listed()).toEqual({ declared: [{ collection: "items", field: "n" }], automatic: [], total: 0, limit: 100, offset: 0 });
    // Not built again: the same entries serve at once.
    expect(b.t.backend.core.sqlite.prepare("SELECT ix FROM record_field_indexes WHERE path = 'n' AND declared = 1 AND build_to IS NULL").pluck().get()).toBe(ix);
    expect(await plan(b, "items", { n: 3 })).toMatch(THROUGH_INDEX);
  });

  it("refuses past the per-app limit and past the app's build budget, saying why", async () => {
    const b = await dataBackend();
    const tenants = await largeTenants(b, "items", 2, 30);
    const db = b.t.backend.core.sqlite;
    const fields = createFieldIndexes(db);
    const ask = (autos: ReturnType<typeof createAutoIndexes>, paths: string[]) => {
      for (const t of tenants) autos.consider({ appId: b.t.app.id, tenantId: t.id, collection: "items" }, paths, b.t.clock());
    };
    const full = createAutoIndexes(db, fields, { ...AUTO_INDEX, minRows: 10, minTenants: 2, maxPerApp: 1 });
    ask(full, ["status", "n"]);
    await fields.settled();
    expect(full.list(b.t.app.id).map((i) => [i.field, i.state, i.reason?.slice(0, 30) ?? null])).toEqual([
      ["n", "refused", "the app already has 1 automati"],
      ["status", "ready", null],
    ]);

    const budget = createAutoIndexes(db, fields, { ...AUTO_INDEX, minRows: 10, minTenants: 2, buildsPerWindow: 2 });
    ask(budget, ["a", "b", "c"]);
    await fields.settled();
    expect(budget.list(b.t.app.id).map((i) => [i.field, i.state])).toEqual([
      ["a", "ready"],
      ["b", "ready"],
      ["c", "refused"],
      ["status", "ready"],
    ]);
    expect(budget.list(b.t.app.id).find((i) => i.field === "c")?.reason).toContain("started 2 automatic index builds in the last 24 h");
  });

  it("keeps its bookkeeping bounded per app: lists naming thousands of new fields build nothing past the slots and remember at most MAX_REFUSED_PER_APP refusals (issue 39 item 3)", async () => {
    const b = await dataBackend();
    seed(b, "items", 30);
    const fields = createFieldIndexes(b.t.backend.core.sqlite);
    const autos = createAutoIndexes(b.t.backend.core.sqlite, fields, { ...AUTO_INDEX, minRows: 10, minTenants: 1, maxPerApp: 2, buildsPerWindow: 1000 });
    const scope = { appId: b.t.app.id, tenantId: b.tenant.id, collection: "items" };
    for (let i = 0; i < 40; i++) autos.consider(scope, Array.from({ length: 50 }, (_, j) => `f${i}_${j}`), b.t.clock());
    await fields.settled();
    const listed = autos.list(b.t.app.id);
    expect(listed.filter((i) => i.state === "ready")).toHaveLength(2);
    expect(listed.filter((i) => i.state === "pending")).toHaveLength(0);
    expect(listed.filter((i) => i.state === "refused")).toHaveLength(MAX_REFUSED_PER_APP);
    expect(listed).toHaveLength(2 + MAX_REFUSED_PER_APP);
  });

  it("pages the admin list of automatic indexes (issue 39 item 3)", async () => {
    const b = await dataBackend();
    const tenants = await largeTenants(b, "items");
    for (const t of tenants) for (const field of ["a", "b", "c"]) await dataClient(b.t, t).list("items", { filter: { [field]: 1 }, limit: 1 });
    await settled(b);
    const token = await developerSession(b.t);
    const page = (query: string) => b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes${query}`, { developer: token });
    const all = await page("");
    expect(all.body.automatic.map((i: { field: string }) => i.field)).toEqual(["a", "b", "c"]);
    expect(all.body).toMatchObject({ total: 3, limit: 100, offset: 0 });
    const second = await page("?limit=2&offset=2");
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ automatic: [expect.objectContaining({ field: "c", state: "ready" })], total: 3, limit: 2, offset: 2 });
    expectError(await page("?limit=0"), 400, "invalid_request");
    expectError(await page("?limit=201"), 400, "invalid_request");
  });

  it("drops the app's indexes and their entries when the app is deleted", async () => {
    const b = await dataBackend();
    const admin = b.t.backend.admin;
    const second = await admin.createApp({ name: "second" });
    const tenants: TestTenant[] = [];
    for (let i = 0; i < AUTO_INDEX.minTenants; i++) tenants.push(await signupTenant(b.t, { key: second.publishableKey, appId: second.id }));
    for (const t of tenants) seed(b, "items", AUTO_INDEX.minRows, t.id, second.id);
    for (const t of tenants) {
      const res = await b.t.request("GET", `/api/v1/data/items?filter=${encodeURIComponent('{"status":"s2"}')}`, { bearer: t.bearer });
      expect(res.body.total).toBe(AUTO_INDEX.minRows / 10);
    }
    await settled(b);
    expect(autoIndexFields(b, second.id)).toEqual(["status"]);
    await admin.deleteApp(second.id);
    await settled(b);
    const db = b.t.backend.core.sqlite;
    expect(db.prepare("SELECT COUNT(*) FROM record_field_indexes").pluck().get()).toBe(0);
    expect(db.prepare("SELECT COUNT(*) FROM record_field_entries").pluck().get()).toBe(0);
    expect(db.prepare("SELECT COUNT(*) FROM record_field_drops").pluck().get()).toBe(0);
  });
});

/**
 * An app whose collection is large: `minTenants` tenants with `minRows` records each and one
 * more with 300,000 (every build step reads a bounded range of the table, whoever's rows).
 * Also a second app with a tenant, whose writes must not wait for the first app's build.
 */
async function largeCollection() {
  const b = await dataBackend();
  const tenants = await largeTenants(b, "items");
  const big = await signupTenant(b.t);
  const kept = await b.api.create("items", { status: "kept" });
  seed(b, "items", 300_000, big.id);
  const second = await b.t.backend.admin.createApp({ name: "second" });
  const neighbour = await signupTenant(b.t, { key: second.publishableKey, appId: second.id });
  const { url } = await serveHttp(b.t.backend);
  const http = async (who: TestTenant, method: string, path: string, body?: unknown) => toReply(await fetch(buildRequest(url, method, path, { bearer: who.bearer, body })));
  const building = () => b.t.backend.core.sqlite.prepare("SELECT COUNT(*) FROM record_field_indexes WHERE build_to IS NOT NULL").pluck().get() as number;
  return { b, tenants, big, kept: kept.body.record.id as string, neighbour, http, building };
}

describe("index builds in chunks (issue 39 item 2)", () => {
  it("another app's writes and this app's reads and writes go on during a build; the index then lists what they wrote", async () => {
    const { b, tenants, kept, neighbour, http, building } = await largeCollection();
    const page = listPath("items", { filter: { status: "s3" }, limit: 20, offset: 3 });
    const before = await http(b.tenant, "GET", page);
    expect(before.body.total).toBe(AUTO_INDEX.minRows / 10);
    for (const t of tenants.slice(1)) await http(t, "GET", page);
    expect(building()).toBe(1);

    // While the build runs: another app's create, this tenant's create, update and delete, a read.
    const other = await http(neighbour, "POST", "/api/v1/data/notes", { data: { text: "not waiting" } });
    expect(other.status).toBe(201);
    const during = await http(b.tenant, "POST", "/api/v1/data/items", { data: { status: "during" } });
    expect(during.status).toBe(201);
    const moved = (await http(b.tenant, "GET", listPath("items", { filter: { status: "s4" }, limit: 1 }))).body.records[0].id as string;
    expect((await http(b.tenant, "PUT", `/api/v1/data/items/${moved}`, { data: { status: "moved" } })).status).toBe(200);
    const gone = (await http(b.tenant, "GET", listPath("items", { filter: { status: "s5" }, limit: 1 }))).body.records[0].id as string;
    expect((await http(b.tenant, "DELETE", `/api/v1/data/items/${gone}`)).status).toBe(204);
    expect((await http(b.tenant, "GET", `/api/v1/data/items/${kept}`)).status).toBe(200);
    // All answered before the build was done: none of them waited for it.
    expect(building()).toBe(1);
    expect(await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).toEqual([expect.objectContaining({ field: "status", state: "pending" })]);

    await settled(b);
    expect(building()).toBe(0);
    expect(await plan(b, "items", { status: "s3" })).toMatch(THROUGH_INDEX);
    const after = await http(b.tenant, "GET", page);
    expect(ids(after)).toEqual(ids(before));
    expect(after.body.total).toBe(before.body.total);
    expect(ids(await http(b.tenant, "GET", listPath("items", { filter: { status: "during" } })))).toEqual([during.body.record.id]);
    expect(ids(await http(b.tenant, "GET", listPath("items", { filter: { status: "moved" } })))).toEqual([moved]);
    expect((await http(b.tenant, "GET", listPath("items", { filter: { status: "s5" } }))).body.total).toBe(AUTO_INDEX.minRows / 10 - 1);
    expect((await http(b.tenant, "GET", listPath("items", { filter: { status: "s4" } }))).body.total).toBe(AUTO_INDEX.minRows / 10 - 1);
    // Every record of the collection has its entry, no more.
    const db = b.t.backend.core.sqlite;
    expect(db.prepare("SELECT COUNT(*) FROM record_field_entries").pluck().get()).toBe(db.prepare("SELECT COUNT(*) FROM records WHERE collection = 'items' AND app_id = ?").pluck().get(b.t.app.id));
  });

  it("a declared index is built the same way: the settings change answers at once and lists use the index once it is complete", async () => {
    const { b, neighbour, http, building } = await largeCollection();
    const token = await developerSession(b.t);
    const patched = await b.t.request("PATCH", `/api/v1/admin/apps/${b.t.app.id}`, { developer: token, body: { settings: { collections: { items: { indexed: ["n"] } } } } });
    expect(patched.status).toBe(200);
    // Answered before the index is complete; other apps' writes go on meanwhile.
    expect(building()).toBe(1);
    expect((await http(neighbour, "POST", "/api/v1/data/notes", { data: { text: "not waiting" } })).status).toBe(201);
    const page = listPath("items", { filter: { n: { $gte: 9990 } }, sort: { n: 1 } });
    const before = await http(b.tenant, "GET", page);
    expect(before.body.total).toBe(10);
    expect(building()).toBe(1);
    expect(await plan(b, "items", { n: 3 })).not.toMatch(THROUGH_INDEX);

    await settled(b);
    expect(await plan(b, "items", { n: 3 })).toMatch(THROUGH_INDEX);
    const after = await http(b.tenant, "GET", page);
    expect(ids(after)).toEqual(ids(before));
  });

  it("builds on an in-memory database too (the same chunks, on its one connection)", async () => {
    const db = openDatabase(":memory:");
    afterThisTest(() => db.close());
    db.pragma("foreign_keys = OFF");
    db.prepare(
      `WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < 30)
       INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
       SELECT 'rec_' || x, 'app_mem', 'tenant_' || (x % 2), 'items', json_object('status', 's' || (x % 3)), x, x FROM i`,
    ).run();
    const fields = createFieldIndexes(db);
    const autos = createAutoIndexes(db, fields, { ...AUTO_INDEX, minRows: 10, minTenants: 2 });
    for (const tenantId of ["tenant_0", "tenant_1"]) autos.consider({ appId: "app_mem", tenantId, collection: "items" }, ["status"], 0);
    await fields.settled();
    expect(autos.list("app_mem")).toEqual([expect.objectContaining({ field: "status", state: "ready", rows: 30 })]);
    expect(db.prepare("SELECT COUNT(*) FROM record_field_entries").pluck().get()).toBe(30);
  });

  it("closes while a build runs: the close stops between two steps, and the next start finishes the build", async () => {
    const { b, tenants, http } = await largeCollection();
    for (const t of tenants) expect((await http(t, "GET", listPath("items", { filter: { status: "s3" }, limit: 1 }))).status).toBe(200);
    await b.t.backend.close();

    const path = b.t.backend.core.sqlite.name;
    const db = new Database(path, { readonly: true });
    afterThisTest(() => db.close());
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.prepare("SELECT path FROM record_field_indexes").pluck().all()).toEqual(["status"]);

    const again = await createTenantBackend({ dataDir: b.t.dataDir, logger: "silent", argon2: TEST_ARGON2, ...(await testStoreConfig(b.t.dataDir)).config });
    await again.core.db.records.autoIndexesSettled();
    await again.close();
    expect(db.prepare("SELECT build_to IS NULL FROM record_field_indexes").pluck().get()).toBe(1);
    expect(db.prepare("SELECT COUNT(*) FROM record_field_entries").pluck().get()).toBe(db.prepare("SELECT COUNT(*) FROM records WHERE collection = 'items'").pluck().get());
  });
});

describe("per-field index entries on update (schema 25)", () => {
  it("an update rewrites a record's entries only where an indexed value or its type changed, and lists follow every change", async () => {
    const b = await dataBackend({ items: { indexed: ["n", "tag"] } });
    await settled(b);
    const db = b.t.backend.core.sqlite;
    const id = (await b.api.create("items", { n: 1, tag: "a", note: "x" })).body.record.id as string;
    const entries = () => db.prepare("SELECT rank, value FROM record_field_entries e JOIN records r ON r.seq = e.rec_seq WHERE r.id = ? ORDER BY e.ix").all(id);
    const found = async (filter: unknown) => {
      const res = await b.api.list("items", { filter });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return ids(res);
    };
    expect(entries()).toEqual([{ rank: 2, value: 1 }, { rank: 3, value: "a" }]);

    // Same size, indexed fields untouched: the record's row is the only change (the old
    // trigger deleted and re-inserted both entries: 5 changes).
    const before = db.prepare("SELECT total_changes()").pluck().get() as number;
    expect((await b.api.update("items", id, { note: "y" })).status).toBe(200);
    expect((db.prepare("SELECT total_changes()").pluck().get() as number) - before).toBe(1);
    expect(await found({ n: 1 })).toEqual([id]);

    expect((await b.api.update("items", id, { n: 2 })).status).toBe(200);
    expect(entries()).toEqual([{ rank: 2, value: 2 }, { rank: 3, value: "a" }]);
    expect(await found({ n: 1 })).toEqual([]);
    expect(await found({ n: 2, tag: "a" })).toEqual([id]);

    // The same text in another type is another value.
    expect((await b.api.update("items", id, { n: "2" })).status).toBe(200);
    expect(await found({ n: 2 })).toEqual([]);
    expect(await found({ n: "2" })).toEqual([id]);
    // Removed (merge patch null): the entry ranks as missing, which an equality with null matches.
    expect((await b.api.update("items", id, { tag: null })).status).toBe(200);
    expect(entries()).toEqual([{ rank: 3, value: "2" }, { rank: 1, value: null }]);
    expect(await found({ tag: null })).toEqual([id]);
    expect(await found({ tag: "a" })).toEqual([]);
  });
});

describe("schema 17 on a database from before", () => {
  it("builds the automatic indexes it had again beside the table, and drops the old expression indexes", async () => {
    const b = await dataBackend({ items: { indexed: ["n"] } });
    seed(b, "items", 500);
    await settled(b);
    await b.t.backend.close();
    // The database as tenantd left it before schema 17: an automatic index on `status`, a
    // declared one on `n`, both expression indexes on records.
    const old = new Database(b.t.backend.core.sqlite.name);
    old.exec(`
      DROP TRIGGER record_field_insert; DROP TRIGGER record_field_update; DROP TRIGGER record_field_delete;
      DROP TABLE record_field_entries; DROP TABLE record_field_indexes; DROP TABLE record_field_drops;
      DELETE FROM schema_migrations WHERE version = 17;
      CREATE TABLE record_auto_indexes (name TEXT PRIMARY KEY, app_id TEXT NOT NULL, collection TEXT NOT NULL, path TEXT NOT NULL,
        rows INTEGER NOT NULL, build_ms INTEGER NOT NULL, created_at INTEGER NOT NULL, last_used_at INTEGER NOT NULL, UNIQUE (app_id, collection, path));
      INSERT INTO record_auto_indexes VALUES ('records_a_000000000000_00000000000000000001', '${b.t.app.id}', 'items', 'status', 500, 1, 1, 1);
      CREATE INDEX records_a_000000000000_00000000000000000001 ON records (app_id, tenant_id, collection, json_extract(data, '$."status"')) WHERE app_id = '${b.t.app.id}';
      CREATE INDEX records_f_000000000000_00000000000000000002 ON records (app_id, tenant_id, collection, json_extract(data, '$."n"')) WHERE app_id = '${b.t.app.id}';
    `);
    old.close();

    const again = await createTenantBackend({ dataDir: b.t.dataDir, logger: "silent", argon2: TEST_ARGON2, ...(await testStoreConfig(b.t.dataDir)).config });
    await again.core.db.records.autoIndexesSettled();
    const db = again.core.sqlite;
    expect(db.prepare("SELECT path, declared, build_to IS NULL AS ready FROM record_field_indexes ORDER BY path").all()).toEqual([
      { path: "n", declared: 1, ready: 1 },
      { path: "status", declared: 0, ready: 1 },
    ]);
    expect(db.prepare("SELECT COUNT(*) FROM record_field_entries").pluck().get()).toBe(1000);
    // Indexes: the full-text index's own tables (records_fts_data, ...) share the prefix.
    expect(db.prepare("SELECT name FROM sqlite_master WHERE (type = 'index' AND name LIKE 'records^_%^_%' ESCAPE '^') OR name = 'record_auto_indexes'").pluck().all()).toEqual([]);
    await again.close();
  });
});

// SQLite plans a cached statement again after a schema change, with the values bound at that
// moment: a partial index of one collection must not then serve the next collection bound.
describe("statements planned again after an index appears", () => {
  it("lists of a collection answer the same after another process makes a partial index for a different collection", async () => {
    const b = await dataBackend();
    seed(b, "first", 30);
    seed(b, "second", 40);
    const list = async (collection: string) => (await b.api.list(collection, { filter: { status: { $in: ["s3", "s4"] } }, sort: { status: 1 }, limit: 10 })).body;
    const before = { first: await list("first"), second: await list("second") };
    expect(before.first.total).toBe(6);
    expect(before.second.total).toBe(8);

    // The shape of the expression indexes tenantd made before schema 17 (an older node, a tool).
    const other = new Database(b.t.backend.core.sqlite.name);
    other.exec(`CREATE INDEX probe_first ON records (app_id, tenant_id, collection, json_extract(data, '$."status"')) WHERE app_id = '${b.t.app.id}' AND collection = 'first'`);
    other.close();
    expect(await list("first")).toEqual(before.first);
    expect(await list("second")).toEqual(before.second);
  });

  it("builds the automatic index of a large collection after a declared index served a smaller collection", async () => {
    const b = await dataBackend();
    await b.t.backend.admin.updateApp(b.t.app.id, { settings: { collections: { small: { indexed: ["status"] } } } });
    seed(b, "small", 20);
    await settled(b);
    expect((await b.api.list("small", { filter: { n: 3 } })).body.total).toBe(1);

    const tenants = await largeTenants(b, "items");
    for (const t of tenants) expect((await dataClient(b.t, t).list("items", { filter: { n: 3 } })).body.total).toBe(1);
    await settled(b);
    expect(autoIndexFields(b)).toEqual(["n"]);
    expect(await plan(b, "items", { n: 3 })).toMatch(THROUGH_INDEX);
  });
});
