import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { DRIVERS, startFilesBackend } from "./files-helpers.ts";

// Empty files move no byte count: without a cap on their number, a tenant could make rows
// (and storage objects) without bound (issue 39 item 4c).
describe("file count quota per tenant", () => {
  it("refuses a file past settings.quotas.files with 402 limit_reached, empty files included; a delete, a plan's file_count or null lifts it", async () => {
    const t = await startFilesBackend(DRIVERS[1]);
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { files: 2 } } });
    const tenant = await signupTenant(t);
    const empty = (name: string) => t.upload({ filename: name, data: "" }, tenant);
    const first = await empty("a.txt");
    expect(first.status).toBe(201);
    expect((await empty("b.txt")).status).toBe(201);
    const over = await empty("c.txt");
    expectError(over, 402, "limit_reached");
    expect(over.body.message).toContain("2 files");
    // Another tenant has its own count.
    expect((await t.upload({ filename: "a.txt", data: "" }, t.tenant)).status).toBe(201);

    expect((await t.request("DELETE", `/api/v1/files/${first.body.file.id}`, { bearer: tenant.bearer })).status).toBe(204);
    expect((await empty("c.txt")).status).toBe(201);
    expectError(await empty("d.txt"), 402, "limit_reached");
    await t.backend.admin.updateApp(t.app.id, { settings: { billing: { defaultEntitlements: { file_count: 3 } } } });
    expect((await empty("d.txt")).status).toBe(201);
    expectError(await empty("e.txt"), 402, "limit_reached");
    await t.backend.admin.updateApp(t.app.id, { settings: { billing: { defaultEntitlements: { file_count: null } }, quotas: { files: null } } });
    expect((await empty("e.txt")).status).toBe(201);
  });
});
