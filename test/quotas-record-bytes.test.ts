import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { dataClient } from "./data-helpers.ts";
import { storeRows } from "./_store.ts";

/** Issue 39, item 4(a): a byte quota on record data, kept as a counter, checked in the write. */

/** Record data whose compact JSON is exactly `bytes` bytes: {"s":"xx…"}. */
const sized = (bytes: number, extra: Record<string, unknown> = {}) => {
  const base = JSON.stringify({ ...extra, s: "" }).length;
  return { ...extra, s: "x".repeat(bytes - base) };
};

async function capped(recordBytes: number | null, collections: Record<string, { unique?: string[] }> = {}) {
  const t = await startBackend();
  await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { recordBytes }, collections } });
  const tenant = await signupTenant(t);
  return { t, tenant, api: dataClient(t, tenant) };
}

/** The bytes of record data the tenant can read back in a collection. */
async function storedBytes(t: TestBackend, tenant: TestTenant, collection: string): Promise<number> {
  const res = await t.request("GET", `/api/v1/data/${collection}?limit=1000`, { bearer: tenant.bearer });
  expect(res.status, res.text).toBe(200);
  return (res.body.records as { data: unknown }[]).reduce((sum, r) => sum + Buffer.byteLength(JSON.stringify(r.data)), 0);
}

const refusedForBytes = (res: Parameters<typeof expectError>[0], cap: number) => {
  expectError(res, 402, "limit_reached");
  expect(res.body.message).toContain(`${cap} bytes`);
};

describe("settings.quotas.recordBytes", () => {
  it("defaults to 1 GiB, reads back, and null removes the cap", async () => {
    const t = await startBackend();
    const quotas = async () => (await t.backend.admin.getApp(t.app.id)).settings.quotas as { recordBytes: number | null };
    expect((await quotas()).recordBytes).toBe(1024 * 1024 * 1024);
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { recordBytes: 100 } } });
    const tenant = await signupTenant(t);
    const api = dataClient(t, tenant);
    refusedForBytes(await api.create("notes", sized(101)), 100);
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { recordBytes: null } } });
    expect((await quotas()).recordBytes).toBeNull();
    expect((await api.create("notes", sized(101))).status).toBe(201);
  });

  it("refuses a create past the cap with 402 and writes nothing; a delete gives the bytes back", async () => {
    const { t, tenant, api } = await capped(1000);
    const first = await api.create("notes", sized(600));
    expect(first.status, first.text).toBe(201);
    // Another collection counts against the same tenant-wide cap.
    refusedForBytes(await api.create("tasks", sized(401)), 1000);
    expect((await api.create("tasks", sized(400))).status).toBe(201);
    refusedForBytes(await api.create("notes", sized(9)), 1000);
    expect((await api.list("notes")).body.total).toBe(1);
    expect((await api.list("tasks")).body.total).toBe(1);
    // Another tenant has its own bytes.
    const other = dataClient(t, await signupTenant(t));
    expect((await other.create("notes", sized(1000))).status).toBe(201);
    expect((await api.remove("notes", first.body.record.id)).status).toBe(204);
    expect((await api.create("notes", sized(600))).status).toBe(201);
    expect((await storedBytes(t, tenant, "notes")) + (await storedBytes(t, tenant, "tasks"))).toBe(1000);
  });

  it("refuses a merge-patch that grows the data past the cap, leaving the record as it was; shrinking is always allowed", async () => {
    const { t, api } = await capped(1000);
    const a = (await api.create("notes", sized(500, { k: "a" }))).body.record;
    const b = (await api.create("notes", sized(400, { k: "b" }))).body.record;
    refusedForBytes(await api.update("notes", a.id, { more: "y".repeat(100) }), 1000);
    expect((await api.get("notes", a.id)).body.record.data).toEqual(a.data);
    // Growing within the cap passes, to the byte.
    const grown = await api.update("notes", a.id, { more: "y".repeat(100 - ',"more":""'.length) });
    expect(grown.status, grown.text).toBe(200);
    refusedForBytes(await api.update("notes", b.id, { n: 1 }), 1000);
    // A lower cap leaves the tenant over it: writes that shrink still pass, one that grows does not.
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { recordBytes: 400 } } });
    expect((await api.update("notes", a.id, { more: null })).status).toBe(200);
    expect((await api.update("notes", b.id, { s: "" })).status).toBe(200);
    refusedForBytes(await api.update("notes", b.id, { n: 1 }), 400);
  });

  it("counts an upsert by what it adds, whether it creates or updates", async () => {
    const { api } = await capped(1000, { items: { unique: ["key"] } });
    expect((await api.upsert("items", sized(600, { key: "a" }))).status).toBe(201);
    refusedForBytes(await api.upsert("items", sized(401, { key: "b" })), 1000);
    refusedForBytes(await api.upsert("items", sized(1001, { key: "a" })), 1000);
    const updated = await api.upsert("items", sized(1000, { key: "a" }));
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.created).toBe(false);
    expect((await api.list("items")).body.total).toBe(1);
  });

  it("refuses a batch whose writes together pass the cap, writing none of them; a delete in the batch makes room", async () => {
    const { t, tenant, api } = await capped(1000);
    const keep = (await api.create("notes", sized(500))).body.record;
    const batch = (operations: unknown[]) => t.request("POST", "/api/v1/batch", { bearer: tenant.bearer, body: { operations } });
    const over = await batch([
      { op: "create", collection: "notes", data: sized(300) },
      { op: "create", collection: "notes", data: sized(300) },
    ]);
    expectError(over, 402, "limit_reached");
    expect(over.body.message).toContain("operations[1]");
    expect((await api.list("notes")).body.total).toBe(1);
    const roomy = await batch([
      { op: "delete", collection: "notes", id: keep.id },
      { op: "create", collection: "notes", data: sized(500) },
      { op: "update", collection: "notes", id: "rec_missing", data: {} },
    ]);
    expectError(roomy, 404, "not_found");
    const made = await batch([
      { op: "delete", collection: "notes", id: keep.id },
      { op: "create", collection: "notes", data: sized(600) },
      { op: "create", collection: "notes", data: sized(400) },
    ]);
    expect(made.status, made.text).toBe(200);
    expect(await storedBytes(t, tenant, "notes")).toBe(1000);
  });

  it("a plan's record_bytes entitlement overrides the app's default", async () => {
    const { t, api } = await capped(100);
    refusedForBytes(await api.create("notes", sized(200)), 100);
    await t.backend.admin.updateApp(t.app.id, { settings: { billing: { defaultEntitlements: { record_bytes: 300 } } } });
    expect((await api.create("notes", sized(200))).status).toBe(201);
    refusedForBytes(await api.create("notes", sized(101)), 300);
    await t.backend.admin.updateApp(t.app.id, { settings: { billing: { defaultEntitlements: { record_bytes: true } } } });
    expect((await api.create("notes", sized(5000))).status).toBe(201);
  });

  it("concurrent writers cannot pass the cap together: creates, growing updates and upserts", async () => {
    const size = 1000;
    const cap = 10 * size + size / 2;
    const { t, tenant, api } = await capped(cap, { items: { unique: ["key"] } });
    const creates = await Promise.all(Array.from({ length: 30 }, () => api.create("notes", sized(size))));
    for (const r of creates) if (r.status !== 201) refusedForBytes(r, cap);
    const made = creates.filter((r) => r.status === 201);
    expect(made.length).toBeGreaterThan(0);
    expect(made.length).toBeLessThanOrEqual(10);
    expect(await storedBytes(t, tenant, "notes")).toBe(made.length * size);
    // Free some bytes, then grow every remaining record at once: the grown total stays within the cap.
    for (const r of made.slice(0, 5)) expect((await api.remove("notes", r.body.record.id)).status).toBe(204);
    const rest = made.slice(5);
    const grows = await Promise.all(rest.map((r) => api.update("notes", r.body.record.id, { more: "y".repeat(size * 2) })));
    for (const r of grows) if (r.status !== 200) refusedForBytes(r, cap);
    const upserts = await Promise.all(Array.from({ length: 10 }, (_, i) => api.upsert("items", sized(size, { key: `k${i}` }))));
    for (const r of upserts) if (r.status !== 201) refusedForBytes(r, cap);
    expect((await storedBytes(t, tenant, "notes")) + (await storedBytes(t, tenant, "items"))).toBeLessThanOrEqual(cap);
  });

  it("counts the records a store held before the counter existed (the migration adds them up)", async () => {
    const first = await capped(1000);
    await first.api.create("notes", sized(600));
    await first.api.create("tasks", sized(300));
    // The store as it was before the counter's migration (SQLite 21, PostgreSQL 15).
    const rows = storeRows(first.t.backend);
    if (rows.engine === "sqlite") {
      for (const trigger of ["added", "removed", "changed", "moved"]) await rows.run(`DROP TRIGGER record_bytes_${trigger}`);
      await rows.run("DROP TABLE record_bytes");
      await rows.run("DELETE FROM schema_migrations WHERE version = 21");
    } else {
      await rows.run("DROP TABLE record_byte_stripes CASCADE");
      await rows.run("DELETE FROM schema_migrations WHERE version = 15");
    }
    await first.t.backend.close();
    const t = await startBackend({ dataDir: first.t.dataDir });
    const api = dataClient(t, first.tenant);
    refusedForBytes(await api.create("notes", sized(101)), 1000);
    expect((await api.create("notes", sized(100))).status).toBe(201);
  });
});
