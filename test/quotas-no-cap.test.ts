import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend, tempDir } from "./_helpers.ts";
import { runCli } from "./_cli.ts";
import { dataClient } from "./data-helpers.ts";

/** Issue 39, item 4: `quotas.records: null` removes the cap as documented, and upserts count like creates. */
describe("the record quota", () => {
  it("settings.quotas.records: null through the admin API removes the cap, and reads back null (not the default)", async () => {
    const t = await startBackend();
    const dev = await developerSession(t);
    const made = await t.request("POST", "/api/v1/admin/apps", { developer: dev, body: { name: "capped" } });
    expect(made.status, made.text).toBe(201);
    const app = made.body.app;
    const patch = (settings: unknown) => t.request("PATCH", `/api/v1/admin/apps/${app.id}`, { developer: dev, body: { settings } });
    expect((await patch({ quotas: { records: 2 } })).status).toBe(200);
    const tenant = await signupTenant(t, { key: app.publishableKey, appId: app.id });
    const api = dataClient(t, tenant);
    for (let i = 0; i < 2; i++) expect((await api.create("notes", { i })).status).toBe(201);
    expectError(await api.create("notes", { i: 2 }), 402, "limit_reached");

    const lifted = await patch({ quotas: { records: null } });
    expect(lifted.status, lifted.text).toBe(200);
    expect(lifted.body.app.settings.quotas.records).toBeNull();
    expect((await t.request("GET", `/api/v1/admin/apps/${app.id}`, { developer: dev })).body.app.settings.quotas.records).toBeNull();
    expect((await api.create("notes", { i: 2 })).status).toBe(201);
    // Another change to the settings keeps the cap lifted; a number sets one again.
    expect((await patch({ corsOrigins: ["https://app.example.com"] })).body.app.settings.quotas.records).toBeNull();
    expect((await patch({ quotas: { records: 3 } })).body.app.settings.quotas.records).toBe(3);
    expectError(await api.create("notes", { i: 3 }), 402, "limit_reached");
  });

  it("tenantd app update --settings lifts the cap with null too", async () => {
    const dir = tempDir();
    expect((await runCli(["app", "create", "--name", "shop", "--settings", '{"quotas":{"records":5}}', "--json", "--data-dir", dir])).code).toBe(0);
    const updated = await runCli(["app", "update", "shop", "--settings", '{"quotas":{"records":null}}', "--json", "--data-dir", dir]);
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).app.settings.quotas.records).toBeNull();
    const shown = await runCli(["app", "show", "shop", "--json", "--data-dir", dir]);
    expect(JSON.parse(shown.stdout).app.settings.quotas.records).toBeNull();
  });

  it("an upsert that would create is refused at the cap; one that updates is not", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { records: 2 }, collections: { items: { unique: ["key"] } } } });
    const tenant = await signupTenant(t);
    const upsert = (data: unknown) => t.request("POST", "/api/v1/data/items/upsert", { bearer: tenant.bearer, body: { data } });
    expect((await upsert({ key: "a", n: 1 })).status).toBe(201);
    expect((await upsert({ key: "b", n: 1 })).status).toBe(201);
    expectError(await upsert({ key: "c", n: 1 }), 402, "limit_reached");
    const updated = await upsert({ key: "a", n: 2 });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body).toMatchObject({ created: false, record: { data: { key: "a", n: 2 } } });
    expect((await t.request("GET", "/api/v1/data/items", { bearer: tenant.bearer })).body.total).toBe(2);
  });
});
