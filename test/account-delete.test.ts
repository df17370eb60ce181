import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";
import { storeRows } from "./_store.ts";

// The delivery log keeps the id of the tenant an event was about (that is its purpose), and
// so does the audit trail, until its retention (docs/audit.md: the deletion is itself an
// entry, and removing entries would break the chain); every other table holding a
// tenant_id must be empty of the deleted tenant.
const LOG_TABLES = new Set(["webhook_events", "webhook_deliveries", "audit_log"]);

/** Rows that still name the tenant, per table, across every table with a tenant_id column. */
async function rowsOf(t: TestBackend, tenantId: string): Promise<{ tenants: number; [table: string]: number }> {
  const db = storeRows(t.backend);
  const tables = (await db.tables()).filter((table) => !LOG_TABLES.has(table.name) && table.columns.includes("tenant_id")).map((table) => table.name);
  const counts: { tenants: number; [table: string]: number } = { tenants: await db.value<number>("SELECT COUNT(*) FROM tenants WHERE id = ?", tenantId) };
  for (const name of tables) counts[name] = await db.value<number>(`SELECT COUNT(*) FROM "${name}" WHERE tenant_id = ?`, tenantId);
  return counts;
}

async function setup() {
  const t = await startBackend({ webhooks: { allowInsecure: true } });
  const developer = await developerSession(t);
  const rx = await startReceiver();
  await configureWebhook(t, developer, rx.url);
  return { t, developer, rx };
}

const deletedEvents = (rx: Awaited<ReturnType<typeof startReceiver>>) => rx.received.map((r) => JSON.parse(r.raw.toString("utf8")));

async function expectGone(t: TestBackend, tenant: TestTenant) {
  const counts = await rowsOf(t, tenant.id);
  expect(Object.keys(counts)).toEqual(expect.arrayContaining(["tenants", "sessions", "email_tokens", "outbox"]));
  expect(Object.values(counts).every((n) => n === 0), JSON.stringify(counts)).toBe(true);
}

describe("account deletion", () => {
  it("self-delete removes every row of the tenant, ends its tokens, frees the email and fires one tenant.deleted", async () => {
    const { t, developer, rx } = await setup();
    const tenant = await signupTenant(t);
    const bystander = await signupTenant(t);
    await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password: "correct horse battery" } });
    expect((await rowsOf(t, tenant.id)).sessions).toBe(2);

    const res = await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, deleted: true });
    await expectGone(t, tenant);

    expectError(await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer }), 401, "session_ended");
    expectError(await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer }), 401, "session_ended");
    expect((await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: tenant.refreshToken } })).status).toBe(401);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: bystander.bearer })).status).toBe(200);

    const [d] = await finishedDeliveries(t, developer, 1);
    expect(d).toMatchObject({ event: "tenant.deleted", tenantId: tenant.id, status: "delivered" });
    expect(deletedEvents(rx)).toEqual([
      { event: "tenant.deleted", timestamp: Math.floor(t.clock() / 1000), appId: t.app.id, tenantId: tenant.id, email: tenant.email, payload: { reason: "self_delete", locale: "en" } },
    ]);

    const again = await signupTenant(t, { email: tenant.email });
    expect(again.id).not.toBe(tenant.id);
  });

  it("the developer's delete fires admin_delete; unknown tenants and other developers' apps are 404", async () => {
    const { t, developer, rx } = await setup();
    const tenant = await signupTenant(t);
    const path = `/api/v1/admin/apps/${t.app.id}/tenants/${tenant.id}`;

    const stranger = await developerSession(t);
    expectError(await t.request("DELETE", path, { developer: stranger }), 404, "not_found");
    expectError(await t.request("DELETE", path), 401, "unauthorized");
    expect((await rowsOf(t, tenant.id)).tenants).toBe(1);

    const res = await t.request("DELETE", path, { developer });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    await expectGone(t, tenant);
    expectError(await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer }), 401, "session_ended");
    expectError(await t.request("DELETE", path, { developer }), 404, "not_found");

    await finishedDeliveries(t, developer, 1);
    expect(deletedEvents(rx)).toEqual([
      { event: "tenant.deleted", timestamp: Math.floor(t.clock() / 1000), appId: t.app.id, tenantId: tenant.id, email: tenant.email, payload: { reason: "admin_delete", locale: "en" } },
    ]);
  });

  it("a tenant of another app cannot be deleted through this app", async () => {
    const { t, developer, rx } = await setup();
    const other = await t.request("POST", "/api/v1/admin/apps", { developer, body: { name: "other" } });
    const outsider = await signupTenant(t, { key: other.body.app.publishableKey, appId: other.body.app.id });
    expectError(await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/tenants/${outsider.id}`, { developer }), 404, "not_found");
    // A bearer of the other app naming this app is refused, not a deletion here.
    expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: { accessToken: outsider.accessToken, appId: t.app.id } })).status).toBe(401);
    expect((await rowsOf(t, outsider.id)).tenants).toBe(1);
    expect(rx.received).toHaveLength(0);
  });

  it("other areas run on tenant.deleting before the rows go; a failure there deletes nothing", async () => {
    const { t, developer, rx } = await setup();
    const tenant = await signupTenant(t);
    const seen: number[] = [];
    let failNext = true;
    t.backend.core.hooks.on("tenant.deleting", async ({ tenantId }) => {
      seen.push((await rowsOf(t, tenantId)).tenants);
      if (failNext) {
        failNext = false;
        throw new Error("blob store unavailable");
      }
    });
    const failed = await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer });
    expectError(failed, 500, "internal_error");
    expect((await rowsOf(t, tenant.id)).tenants).toBe(1);

    expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer })).status).toBe(200);
    expect(seen).toEqual([1, 1]);
    await finishedDeliveries(t, developer, 1);
    expect(rx.received).toHaveLength(1);
  });

  it("the admin API deletes by id or email with reason admin_delete", async () => {
    const { t, developer, rx } = await setup();
    const a = await signupTenant(t);
    const b = await signupTenant(t);
    await expect(t.backend.admin.deleteTenant(t.app.id, a.id)).resolves.toEqual({ tenantId: a.id, email: a.email });
    await expect(t.backend.admin.deleteTenant(t.app.id, b.email.toUpperCase())).resolves.toEqual({ tenantId: b.id, email: b.email });
    await expect(t.backend.admin.deleteTenant(t.app.id, "nobody@example.com")).rejects.toThrow(/No tenant/);
    await finishedDeliveries(t, developer, 2);
    expect(deletedEvents(rx).map((e) => [e.tenantId, e.payload.reason])).toEqual([
      [a.id, "admin_delete"],
      [b.id, "admin_delete"],
    ]);
  });
});
