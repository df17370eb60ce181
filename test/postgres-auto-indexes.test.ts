import { describe, expect, it } from "vitest";
import { AUTO_INDEX } from "../src/db/sqlite/record-auto-indexes.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";
import { recordScope } from "../src/data/records.ts";
import type { TenantAuth } from "../src/http/guards.ts";
import { signupTenant } from "./_helpers.ts";
import { storeRows } from "./_store.ts";
import { dataBackend, dataClient } from "./data-helpers.ts";

type Backend = Awaited<ReturnType<typeof dataBackend>>;

/** Writes `n` records of the tenant straight into PostgreSQL: record i is { status: "s<i % 10>", n: i }. */
async function seed(b: Backend, collection: string, n: number, tenantId = b.tenant.id) {
  const start = b.t.clock();
  await storeRows(b.t.backend).run(
    `INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
     SELECT 'rec_seed_' || $1 || '_' || x, $2, $1, $3, json_build_object('status', 's' || (x % 10), 'n', x)::text, $4::bigint + x, $4::bigint + x
     FROM generate_series(0, $5::int - 1) AS x`,
    tenantId,
    b.t.app.id,
    collection,
    start,
    n,
  );
}

/** The tenants an automatic build needs (the backend's own first), each with a large collection, listing on `filter`. */
async function enoughTenantsAsk(b: Backend, collection: string, filter: unknown) {
  const tenants = [b.tenant];
  while (tenants.length < AUTO_INDEX.minTenants) tenants.push(await signupTenant(b.t));
  for (const t of tenants.slice(1)) await seed(b, collection, AUTO_INDEX.minRows, t.id);
  for (const t of tenants) expect((await dataClient(b.t, t).list(collection, { filter })).status).toBe(200);
}

async function plan(b: Backend, collection: string, filter: unknown, sort?: unknown): Promise<string> {
  const core = b.t.backend.core;
  const app = (await core.db.apps.findById(b.t.app.id))!;
  const { scope } = recordScope({ app, tenantId: b.tenant.id } as TenantAuth, collection);
  const withAuto = { ...scope, indexed: new Set([...scope.indexed, ...(await core.db.records.autoIndexes(app.id)).filter((i) => i.state === "ready").map((i) => i.field)]) };
  return (await core.db.records.explainList(withAuto, parseFilter(JSON.stringify(filter)), parseSort(sort === undefined ? undefined : JSON.stringify(sort)))).join("\n");
}

// Runs in the postgres project only (postgres-*.test.ts); SQLite's automatic indexes: data-auto-indexes.test.ts.
describe("automatic indexes on PostgreSQL", () => {
  it("builds one CONCURRENTLY for a field a list filters on over a large collection, uses it, answers the same, and lists it for the admin", async () => {
    const b = await dataBackend();
    await seed(b, "items", AUTO_INDEX.minRows);
    const before = await b.api.list("items", { filter: { status: "s3" }, limit: 7, offset: 2 });
    expect(before.status).toBe(200);
    expect(before.body.total).toBe(AUTO_INDEX.minRows / 10);
    // One tenant alone never causes a build (issue 39 item 2).
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).toEqual([]);
    await enoughTenantsAsk(b, "items", { status: "s3" });
    await b.t.backend.core.db.records.autoIndexesSettled();
    const listed = await b.t.backend.core.db.records.autoIndexes(b.t.app.id);
    expect(listed.map((i) => [i.collection, i.field, i.state])).toEqual([["items", "status", "ready"]]);
    expect(listed[0]!.name).toMatch(/^records_a_/);
    expect(listed[0]!.rows).toBe(AUTO_INDEX.minTenants * AUTO_INDEX.minRows);
    // Valid (a concurrent build that failed would leave it INVALID), and read by the list's plan.
    const valid = await storeRows(b.t.backend).value<boolean>(
      "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE c.relname = $1",
      listed[0]!.name,
    );
    expect(valid).toBe(true);
    expect(await plan(b, "items", { status: "s3" })).toContain(listed[0]!.name!);
    const after = await b.api.list("items", { filter: { status: "s3" }, limit: 7, offset: 2 });
    expect(after.body).toEqual(before.body);
  });

  it("builds nothing for a small collection, and a second tenant's small collection does not hide the first's large one", async () => {
    const b = await dataBackend();
    const small = await signupTenant(b.t);
    await seed(b, "items", 100, small.id);
    expect((await dataClient(b.t, small).list("items", { filter: { status: "s1" } })).body.total).toBe(10);
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).toEqual([]);
    await seed(b, "items", AUTO_INDEX.minRows);
    expect((await b.api.list("items", { filter: { status: "s1" } })).body.total).toBe(AUTO_INDEX.minRows / 10);
    await enoughTenantsAsk(b, "items", { status: "s1" });
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect((await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).map((i) => i.state)).toEqual(["ready"]);
  });

  it("a declared field's automatic index is dropped for the declared one, built CONCURRENTLY too", async () => {
    const b = await dataBackend();
    await seed(b, "items", AUTO_INDEX.minRows);
    await enoughTenantsAsk(b, "items", { status: "s3" });
    await b.t.backend.core.db.records.autoIndexesSettled();
    expect(await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).toHaveLength(1);
    await b.t.backend.admin.updateApp(b.t.app.id, { settings: { collections: { items: { indexed: ["status"] } } } });
    expect(await b.t.backend.core.db.records.autoIndexes(b.t.app.id)).toEqual([]);
    const names = await storeRows(b.t.backend).column<string>("SELECT indexname FROM pg_indexes WHERE indexname LIKE 'records\\_%\\_%' AND indexname NOT IN ('records_list', 'records_app', 'records_pkey', 'records_id_key')");
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^records_f_/);
    expect((await b.api.list("items", { filter: { status: "s3" } })).body.total).toBe(AUTO_INDEX.minRows / 10);
  });
});
