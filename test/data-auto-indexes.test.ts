import { describe, expect, it } from "vitest";
import { createAutoIndexes, AUTO_INDEX } from "../src/db/sqlite/record-auto-indexes.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";
import { recordScope } from "../src/data/records.ts";
import type { TenantAuth } from "../src/http/guards.ts";
import { developerSession } from "./_helpers.ts";
import { dataBackend, dataClient } from "./data-helpers.ts";

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

// Automatic indexes are a SQLite feature, so this file runs in the sqlite project only
// (vitest.config.ts): on PostgreSQL none are built, and the admin API lists none (docs/scaling.md); what PostgreSQL offers instead, declared expression indexes the
// planner uses, is tested in data-indexes.test.ts and postgres-records.test.ts ("indexed
// fields get expression indexes the planner uses for equality, ranges and sorts").
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

    const token = await developerSession(b.t);
    const res = await b.t.request("GET", `/api/v1/admin/apps/${b.t.app.id}/indexes`, { developer: token });
    expect(res.status).toBe(200);
    expect(res.body.declared).toEqual([]);
    // The sort on `n` asked for an index too.
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
