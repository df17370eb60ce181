import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { createAutoIndexes, AUTO_INDEX, MAX_REFUSED_PER_APP } from "../src/db/sqlite/record-auto-indexes.ts";
import { gateWrites, writeGate } from "../src/db/sqlite/write-gate.ts";
import { openDatabase } from "../src/db/sqlite/connection.ts";
import { fieldIndex } from "../src/db/sqlite/record-indexes.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";
import { recordScope } from "../src/data/records.ts";
import type { TenantAuth } from "../src/http/guards.ts";
import { afterThisTest, buildRequest, developerSession, serveHttp, signupTenant, tempDir, toReply } from "./_helpers.ts";
import { dataBackend, dataClient, listPath } from "./data-helpers.ts";

type Backend = Awaited<ReturnType<typeof dataBackend>>;

const autoIndexNames = (b: Backend) =>
  b.t.backend.core.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'records^_a^_%' ESCAPE '^' ORDER BY name").pluck().all() as string[];

/**
 * Writes `n` records of the tenant straight into SQLite (the API would take minutes):
 * record i is { status: "s<i % 10>", n: i }, created i ms after the clock's start.
 */
function seed(b: Backend, collection: string, n: number, tenantId = b.tenant.id) {
  const start = b.t.clock();
  b.t.backend.core.sqlite
    .prepare(
      `WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < ?)
       INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
       SELECT 'rec_seed_' || ? || '_' || ? || '_' || x, ?, ?, ?, json_object('status', 's' || (x % 10), 'n', x), ? + x, ? + x FROM i`,
    )
    .run(n, tenantId, collection, b.t.app.id, tenantId, collection, start, start);
}

async function plan(b: Backend, collection: string, filter: unknown, sort?: unknown): Promise<string> {
  const core = b.t.backend.core;
  const app = (await core.db.apps.findById(b.t.app.id))!;
  const { scope } = recordScope({ app, tenantId: b.tenant.id } as TenantAuth, collection);
  const detail = await core.db.records.explainList(scope, parseFilter(JSON.stringify(filter)), parseSort(sort === undefined ? undefined : JSON.stringify(sort)));
  return detail.join("\n");
}

const ids = (res: { body: { records: { id: string }[] } }) => res.body.records.map((r) => r.id);

// This file tests SQLite's mechanism (a worker thread, the write gate), so it runs in the
// sqlite project only (vitest.config.ts); PostgreSQL's automatic indexes, built
// CONCURRENTLY and shared by every node, are tested in postgres-auto-indexes.test.ts.
describe("automatic indexes", () => {
  it("builds an index for a field a list filters on over a large collection, uses it, answers the same, and shows it to the admin", async () => {
    const b = await dataBackend();
    seed(b, "items", AUTO_INDEX.minRows);
    expect(await plan(b, "items", { status: "s3" })).not.toMatch(/records_a_/);

    const before = await b.api.list("items", { filter: { status: "s3" }, limit: 7, offset: 2 });
    expect(before.status).toBe(200);
    expect(before.body.total).toBe(AUTO_INDEX.minRows / 10);
    await b.t.backend.core.db.records.autoIndexesSettled();
    const names = autoIndexNames(b);
    expect(names).toHaveLength(1);
    expect(await plan(b, "items", { status: "s3" })).toContain(`USING INDEX ${names[0]}`);
    expect(await plan(b, "items", { status: { $in: ["s1", "s2"] } }, { status: -1 })).toContain(`USING INDEX ${names[0]}`);

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

    // The sort on `n` asked for an index too; it builds on a worker thread after that list.
    await b.t.backend.core.db.records.autoIndexesSettled();
    const token = await developerSession(b.t);
    const res = await b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes`, { developer: token });
    expect(res.status).toBe(200);
    expect(res.body.declared).toEqual([]);
    expect(res.body.automatic).toEqual(
      ["n", "status"].map((field) => expect.objectContaining({ collection: "items", field, state: "ready", reason: null, rows: AUTO_INDEX.minRows, createdAt: expect.any(String) })),
    );
    const other = await b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes`);
    expect(other.status).toBe(401);
  });

  it("builds nothing for a small collection or a $ne filter", async () => {
    const b = await dataBackend();
    seed(b, "small", 50);
    seed(b, "items", AUTO_INDEX.minRows);
    expect((await b.api.list("small", { filter: { status: "s1" } })).body.total).toBe(5);
    expect((await b.api.list("items", { filter: { status: { $ne: "s1" } }, limit: 1 })).body.total).toBe(AUTO_INDEX.minRows * 0.9);
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(autoIndexNames(b)).toEqual([]);

    // Another tenant's small collection does not hold back a large one's index.
    const { signupTenant } = await import("./_helpers.ts");
    const small = await signupTenant(b.t);
    seed(b, "other", 20, small.id);
    const list = (who: { bearer: { accessToken: string; appId: string } }) =>
      b.t.request("GET", `/api/v1/data/other?filter=${encodeURIComponent('{"n":{"$gte":5}}')}`, { bearer: who.bearer });
    expect((await list(small)).body.total).toBe(15);
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(autoIndexNames(b)).toEqual([]);
    seed(b, "other", AUTO_INDEX.minRows);
    expect((await list(b.tenant)).body.total).toBe(AUTO_INDEX.minRows - 5);
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(autoIndexNames(b)).toHaveLength(1);
  });

  it("drops an automatic index no list used for a week, and one whose field becomes declared", async () => {
    const b = await dataBackend();
    seed(b, "items", AUTO_INDEX.minRows);
    await b.api.list("items", { filter: { status: "s1" }, limit: 1 });
    await b.api.list("items", { sort: { n: -1 }, limit: 1 });
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(autoIndexNames(b)).toHaveLength(2);

    // Six days on, `n` is used again; a day and an hour later, only `status` has been idle a week.
    // (Access tokens last 15 minutes: each step signs in again.)
    const later = async (ms: number) => {
      b.t.clock.advance(ms);
      const login = await b.t.request("POST", "/api/v1/auth/login", { key: b.t.app.publishableKey, body: { email: b.tenant.email, password: "correct horse battery" } });
      return dataClient(b.t, { bearer: { accessToken: login.body.accessToken, appId: b.t.app.id } });
    };
    expect((await (await later(6 * 24 * 3600 * 1000)).list("items", { filter: { n: { $gt: 5 } }, limit: 1 })).status).toBe(200);
    expect((await (await later(25 * 3600 * 1000)).list("items", { limit: 1 })).status).toBe(200);
    const token = await developerSession(b.t);
    const listed = async () => (await b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes`, { developer: token })).body;
    expect((await listed()).automatic.map((i: { field: string }) => i.field)).toEqual(["n"]);
    expect(autoIndexNames(b)).toHaveLength(1);

    await b.t.backend.admin.updateApp(b.t.app.id, { settings: { collections: { items: { indexed: ["n"] } } } });
    expect(autoIndexNames(b)).toEqual([]);
    expect(await listed()).toEqual({ declared: [{ collection: "items", field: "n" }], automatic: [] });
    expect(await plan(b, "items", { n: 3 })).toMatch(/USING INDEX records_f_/);
  });

  it("refuses past the per-app limit and beyond the row bound, saying why", async () => {
    const b = await dataBackend();
    seed(b, "items", 30);
    const db = b.t.backend.core.sqlite;
    const autos = createAutoIndexes(db, { ...AUTO_INDEX, minRows: 10, maxPerApp: 1, maxBuildRows: 1000 });
    const scope = { appId: b.t.app.id, tenantId: b.tenant.id, collection: "items" };
    autos.consider(scope, ["status", "n"], b.t.clock());
    await autos.settled();
    expect(autos.list(b.t.app.id).map((i) => [i.field, i.state, i.reason?.slice(0, 30) ?? null])).toEqual([
      ["n", "refused", "the app already has 1 automati"],
      ["status", "ready", null],
    ]);
    const small = createAutoIndexes(db, { ...AUTO_INDEX, minRows: 10, maxBuildRows: 20 });
    small.consider({ ...scope, collection: "items" }, ["other"], b.t.clock());
    await small.settled();
    expect(small.list(b.t.app.id).find((i) => i.field === "other")).toMatchObject({ state: "refused", reason: expect.stringContaining("30 records") });
  });

  it("keeps its bookkeeping bounded per app: lists naming thousands of new fields queue nothing past the slots and remember at most MAX_REFUSED_PER_APP refusals (issue 39 item 3)", async () => {
    const b = await dataBackend();
    seed(b, "items", 30);
    const autos = createAutoIndexes(b.t.backend.core.sqlite, { ...AUTO_INDEX, minRows: 10, maxPerApp: 2 });
    const scope = { appId: b.t.app.id, tenantId: b.tenant.id, collection: "items" };
    for (let i = 0; i < 40; i++) autos.consider(scope, Array.from({ length: 50 }, (_, j) => `f${i}_${j}`), b.t.clock());
    await autos.settled();
    const listed = autos.list(b.t.app.id);
    expect(listed.filter((i) => i.state === "ready")).toHaveLength(2);
    expect(listed.filter((i) => i.state === "pending")).toHaveLength(0);
    expect(listed.filter((i) => i.state === "refused")).toHaveLength(MAX_REFUSED_PER_APP);
    expect(listed).toHaveLength(2 + MAX_REFUSED_PER_APP);
  });

  it("drops the app's automatic indexes when the app is deleted", async () => {
    const b = await dataBackend();
    const admin = b.t.backend.admin;
    const second = await admin.createApp({ name: "second" });
    const { signupTenant } = await import("./_helpers.ts");
    const t2 = await signupTenant(b.t, { key: second.publishableKey, appId: second.id });
    seed(b, "items", AUTO_INDEX.minRows, t2.id);
    b.t.backend.core.sqlite.prepare("UPDATE records SET app_id = ? WHERE tenant_id = ?").run(second.id, t2.id);
    const res = await b.t.request("GET", `/api/v1/data/items?filter=${encodeURIComponent('{"status":"s2"}')}`, { bearer: t2.bearer });
    expect(res.body.total).toBe(AUTO_INDEX.minRows / 10);
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(autoIndexNames(b)).toHaveLength(1);
    await admin.deleteApp(second.id);
    expect(autoIndexNames(b)).toEqual([]);
  });
});

/**
 * Another connection's view of the database: is its write lock taken (by a build's worker
 * thread)? The probe takes the lock for an instant when it is free.
 */
function lockProbe(path: string): () => boolean {
  const probe = new Database(path);
  probe.pragma("busy_timeout = 0");
  afterThisTest(() => probe.close());
  return () => {
    try {
      probe.exec("BEGIN IMMEDIATE");
    } catch (error) {
      if ((error as { code?: string }).code === "SQLITE_BUSY") return true;
      throw error;
    }
    probe.exec("ROLLBACK");
    return false;
  };
}

/**
 * A collection whose automatic index takes a while to build: the asking tenant holds
 * `minRows` records, another tenant of the app 190,000 more (the index covers them all).
 * Returns the list that asks for the index, over real HTTP, and a way to see the build.
 */
async function largeCollection() {
  const b = await dataBackend();
  const other = await signupTenant(b.t);
  const kept = await b.api.create("items", { status: "kept" });
  seed(b, "items", AUTO_INDEX.minRows);
  seed(b, "items", 190_000, other.id);
  const { url } = await serveHttp(b.t.backend);
  const http = async (method: string, path: string, body?: unknown) => toReply(await fetch(buildRequest(url, method, path, { bearer: b.tenant.bearer, body })));
  const lockHeld = lockProbe(b.t.backend.core.sqlite.name);
  const settled = () => {
    const state = { done: false, promise: b.t.backend.core.db.records.autoIndexesSettled() };
    void state.promise.then(() => (state.done = true));
    return state;
  };
  /** Resolves once the build holds the write lock while this thread runs on (it is on a worker). */
  async function buildHoldsLock(build: { done: boolean }) {
    while (!lockHeld()) {
      if (build.done) throw new Error("the build ended without ever holding the write lock while the server's thread ran");
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }
  return { b, kept: kept.body.record.id as string, http, lockHeld, settled, buildHoldsLock };
}

describe("automatic index builds on a worker thread", () => {
  it("answers reads during a build, holds a create until it ends and saves it once, then lists through the index", async () => {
    const { b, kept, http, lockHeld, settled, buildHoldsLock } = await largeCollection();
    const page = listPath("items", { filter: { status: "s3" }, limit: 20, offset: 3 });
    const before = await http("GET", page);
    expect(before.status).toBe(200);
    expect(before.body.total).toBe(AUTO_INDEX.minRows / 10);

    const build = settled();
    await buildHoldsLock(build);
    const done: string[] = [];
    const track = (name: string, reply: Promise<Awaited<ReturnType<typeof http>>>) => reply.then((r) => (done.push(name), r));
    const create = track("create", http("POST", "/api/v1/data/items", { data: { status: "during" } }));
    const [read, me, indexes] = await Promise.all([
      track("get", http("GET", `/api/v1/data/items/${kept}`)),
      track("me", http("GET", "/api/v1/auth/me")),
      b.t.backend.core.db.records.autoIndexes(b.t.app.id),
    ]);
    // Answered while the build still holds the write lock; the create waits for the build.
    expect(lockHeld()).toBe(true);
    expect(build.done).toBe(false);
    expect(done.sort()).toEqual(["get", "me"]);
    expect(read.status).toBe(200);
    expect(read.body.record.id).toBe(kept);
    expect(me.status).toBe(200);
    expect(me.body.tenant.id).toBe(b.tenant.id);
    expect(indexes).toEqual([expect.objectContaining({ field: "status", state: "pending" })]);

    const created = await create;
    expect(created.status).toBe(201);
    await build.promise;
    const during = await http("GET", listPath("items", { filter: { status: "during" } }));
    expect(during.body.records.map((r: { id: string }) => r.id)).toEqual([created.body.record.id]);

    const [index] = autoIndexNames(b);
    expect(await plan(b, "items", { status: "s3" })).toContain(`USING INDEX ${index}`);
    const after = await http("GET", page);
    expect(ids(after)).toEqual(ids(before));
    expect(after.body.total).toBe(before.body.total);
    expect(await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).toEqual([
      expect.objectContaining({ field: "status", state: "ready", name: index, rows: AUTO_INDEX.minRows + 190_001 }),
    ]);
  });

  it("closes while a build runs: the close waits for it and leaves the index with its row", async () => {
    const { b, http, settled, buildHoldsLock } = await largeCollection();
    const path = b.t.backend.core.sqlite.name;
    expect((await http("GET", listPath("items", { filter: { status: "s3" }, limit: 1 }))).status).toBe(200);
    await buildHoldsLock(settled());
    await b.t.backend.close();

    const db = new Database(path, { readonly: true });
    afterThisTest(() => db.close());
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    const built = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'records^_a^_%' ESCAPE '^'").pluck().all();
    expect(built).toHaveLength(1);
    expect(db.prepare("SELECT name, path FROM record_auto_indexes").all()).toEqual([{ name: built[0], path: "status" }]);
  });

  it("builds on the server's thread for an in-memory database, which no other connection can open", async () => {
    const db = openDatabase(":memory:");
    afterThisTest(() => db.close());
    db.pragma("foreign_keys = OFF");
    db.prepare(
      `WITH RECURSIVE i(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM i WHERE x + 1 < 30)
       INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
       SELECT 'rec_' || x, 'app_mem', 'tenant_mem', 'items', json_object('status', 's' || (x % 3)), x, x FROM i`,
    ).run();
    const autos = createAutoIndexes(db, { ...AUTO_INDEX, minRows: 10 });
    autos.consider({ appId: "app_mem", tenantId: "tenant_mem", collection: "items" }, ["status"], 0);
    await autos.settled();
    expect(autos.list("app_mem")).toEqual([expect.objectContaining({ field: "status", state: "ready", rows: 30 })]);
    expect(db.prepare("SELECT COUNT(*) FROM record_auto_indexes").pluck().get()).toBe(1);
  });

  it("runs a repository call again after a build only when the lock refused its first write", async () => {
    const path = `${tempDir()}/gate.db`;
    const db = new Database(path);
    db.pragma("journal_mode = WAL");
    db.pragma("busy_timeout = 5000");
    db.exec("CREATE TABLE t (v TEXT)");
    const other = new Database(path);
    afterThisTest(() => (other.close(), db.close()));
    const insert = db.prepare<[string]>("INSERT INTO t (v) VALUES (?)");
    const repos = gateWrites(db, {
      t: {
        async one(v: string) {
          insert.run(v);
        },
        /** writes a row, then meets the lock (another connection takes it in between) */
        async two(v: string) {
          insert.run(v);
          other.exec("BEGIN IMMEDIATE");
          insert.run(`${v}-second`);
        },
      },
    });
    const rows = () => db.prepare("SELECT v FROM t ORDER BY rowid").pluck().all();

    // Outside a build: the usual timeout, nothing retried.
    await repos.t.one("a");
    const release = await writeGate(db).hold();
    expect(db.pragma("busy_timeout", { simple: true })).toBe(0);
    other.exec("BEGIN IMMEDIATE");
    const one = repos.t.one("b");
    let oneDone = false;
    void one.then(() => (oneDone = true));
    // The refused write waits for the build instead of busy-waiting the thread.
    await new Promise((resolve) => setImmediate(resolve));
    expect(oneDone).toBe(false);
    other.exec("COMMIT");
    release();
    await one;
    expect(db.pragma("busy_timeout", { simple: true })).toBe(5000);
    expect(rows()).toEqual(["a", "b"]);

    const again = await writeGate(db).hold();
    await expect(repos.t.two("c")).rejects.toMatchObject({ code: "SQLITE_BUSY" });
    other.exec("COMMIT");
    again();
    expect(rows()).toEqual(["a", "b", "c"]);
  });
});

// SQLite plans a cached statement again after a schema change, with the values bound at that
// moment: one collection's partial index must not then serve the next collection bound.
describe("statements planned again after an index appears", () => {
  it("lists of a collection answer the same after another process builds an index for a different collection", async () => {
    const b = await dataBackend();
    seed(b, "first", 30);
    seed(b, "second", 40);
    const list = async (collection: string) => (await b.api.list(collection, { filter: { status: { $in: ["s3", "s4"] } }, sort: { status: 1 }, limit: 10 })).body;
    const before = { first: await list("first"), second: await list("second") };
    expect(before.first.total).toBe(6);
    expect(before.second.total).toBe(8);

    // The CLI or another node declares `status` on "first"; this server has not read the new settings yet.
    const other = new Database(b.t.backend.core.sqlite.name);
    other.exec(fieldIndex(b.t.app.id, "first", "status").sql);
    other.close();
    expect(await list("first")).toEqual(before.first);
    const second = await list("second");
    expect(second.total).toBe(8);
    expect(second).toEqual(before.second);
  });

  it("builds the automatic index of a large collection after a declared index served a smaller collection's row count", async () => {
    const b = await dataBackend();
    await b.t.backend.admin.updateApp(b.t.app.id, { settings: { collections: { small: { indexed: ["status"] } } } });
    seed(b, "small", 20);
    expect((await b.api.list("small", { filter: { n: 3 } })).body.total).toBe(1);

    seed(b, "items", AUTO_INDEX.minRows);
    expect((await b.api.list("items", { filter: { n: 3 } })).body.total).toBe(1);
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(autoIndexNames(b)).toHaveLength(1);
    expect(await plan(b, "items", { n: 3 })).toContain(`USING INDEX ${autoIndexNames(b)[0]}`);
  });
});
