import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { DRIVERS, startFilesBackend } from "./files-helpers.ts";

describe("default quotas per tenant (review item 13)", () => {
  it("a self-registered tenant is capped on records and file bytes by app defaults, which a plan's entitlements override", async () => {
    const t = await startFilesBackend(DRIVERS[1]);
    const app = await t.backend.admin.listApps().then((a) => a[0]!);
    expect(app.settings.quotas).toEqual({ records: 100_000, recordBytes: 1024 * 1024 * 1024, storageBytes: 1024 * 1024 * 1024, files: 10_000 });
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { records: 3, storageBytes: 2000 } } });
    const tenant = await signupTenant(t);
    const create = () => t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { n: 1 } } });
    for (let i = 0; i < 3; i++) expect((await create()).status).toBe(201);
    const over = await create();
    expectError(over, 402, "limit_reached");
    expect(over.body.message).toContain("3 records");
    expect((await t.upload({ filename: "a.txt", data: "x".repeat(1500) }, tenant)).status).toBe(201);
    expectError(await t.upload({ filename: "b.txt", data: "x".repeat(600) }, tenant), 402, "limit_reached");
    // The free plan's entitlements (app defaults) override the quota defaults; null removes a cap.
    await t.backend.admin.updateApp(t.app.id, { settings: { billing: { defaultEntitlements: { records: 5 } }, quotas: { storageBytes: null } } });
    expect((await create()).status).toBe(201);
    expect((await t.upload({ filename: "b.txt", data: "x".repeat(600) }, tenant)).status).toBe(201);
  });
});

describe("the record cap is checked by the insert itself", () => {
  it("counts every collection, holds for collections with a unique field, writes nothing past the cap, and frees a slot on delete", async () => {
    const t = await startFilesBackend(DRIVERS[1]);
    await t.backend.admin.updateApp(t.app.id, {
      settings: { quotas: { records: 3 }, collections: { people: { unique: ["email"] } } },
    });
    const tenant = await signupTenant(t);
    const other = await signupTenant(t);
    const create = (who: typeof tenant, collection: string, data: unknown) => t.request("POST", `/api/v1/data/${collection}`, { bearer: who.bearer, body: { data } });
    expect((await create(tenant, "notes", { n: 1 })).status).toBe(201);
    const first = await create(tenant, "people", { email: "a@example.com" });
    expect(first.status).toBe(201);
    expect((await create(tenant, "tasks", { n: 3 })).status).toBe(201);
    expectError(await create(tenant, "notes", { n: 4 }), 402, "limit_reached");
    expectError(await create(tenant, "people", { email: "b@example.com" }), 402, "limit_reached");
    // Concurrent creates at the cap write nothing.
    const burst = await Promise.all(Array.from({ length: 5 }, (_, i) => create(tenant, i % 2 ? "people" : "notes", { email: `c${i}@example.com` })));
    for (const r of burst) expectError(r, 402, "limit_reached");
    for (const c of ["notes", "people", "tasks"]) expect((await t.request("GET", `/api/v1/data/${c}`, { bearer: tenant.bearer })).body.total).toBe(1);
    // Another tenant has its own count.
    expect((await create(other, "notes", { n: 1 })).status).toBe(201);
    expect((await t.request("DELETE", `/api/v1/data/people/${first.body.record.id}`, { bearer: tenant.bearer })).status).toBe(204);
    expect((await create(tenant, "people", { email: "b@example.com" })).status).toBe(201);
    expectError(await create(tenant, "notes", { n: 5 }), 402, "limit_reached");
  });
});
