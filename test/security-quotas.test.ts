import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { DRIVERS, startFilesBackend } from "./files-helpers.ts";

describe("default quotas per tenant (review item 13)", () => {
  it("a self-registered tenant is capped on records and file bytes by app defaults, which a plan's entitlements override", async () => {
    const t = await startFilesBackend(DRIVERS[1]);
    const app = await t.backend.admin.listApps().then((a) => a[0]!);
    expect(app.settings.quotas).toEqual({ records: 100_000, storageBytes: 1024 * 1024 * 1024 });
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
