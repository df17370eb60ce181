// Issue 45: a developer sees a tenant's view through the tenant API with a read-only,
// 15-minute impersonation session, refused by the tenant guard on every write, audited.
import { describe, expect, it } from "vitest";
import { OPERATIONS } from "../src/openapi/operations.ts";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { multipart } from "./files-helpers.ts";

async function impersonating() {
  const t = await startBackend();
  const developer = await developerSession(t);
  const tenant = await signupTenant(t);
  const note = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { title: "mine" } } });
  expect(note.status, note.text).toBe(201);
  const tenantPath = `/api/v1/admin/apps/${t.app.id}/tenants/${tenant.id}`;
  const opened = await t.request("POST", `${tenantPath}/impersonate`, { developer, headers: { "user-agent": "DashboardBrowser/1" } });
  expect(opened.status, opened.text).toBe(201);
  const bearer = { accessToken: opened.body.accessToken as string, appId: t.app.id };
  return { t, developer, tenant, tenantPath, opened: opened.body, bearer, noteId: note.body.record.id as string };
}

const records = async (t: TestBackend, tenant: TestTenant) => (await t.request("GET", "/api/v1/data/notes", { bearer: tenant.bearer })).body.records as unknown[];

describe("impersonation (issue 45)", () => {
  it("reads what the tenant sees: profile, records, billing, activity; no refresh token", async () => {
    const { t, developer, tenant, opened, bearer } = await impersonating();
    expect(opened).toEqual({
      accessToken: expect.any(String),
      appId: t.app.id,
      sessionId: expect.stringMatching(/^ses_/),
      tenant: { id: tenant.id, email: tenant.email, emailVerifiedAt: null, createdAt: expect.any(String) },
      readOnly: true,
      expiresAt: new Date(t.clock() + 15 * 60_000).toISOString(),
      expiresIn: 900,
    });
    expect(opened).not.toHaveProperty("refreshToken");
    expect((await t.request("GET", "/api/v1/auth/me", { bearer })).body.tenant.email).toBe(tenant.email);
    const list = await t.request("GET", "/api/v1/data/notes", { bearer });
    expect(list.status, list.text).toBe(200);
    expect(list.body.records.map((r: { data: unknown }) => r.data)).toEqual([{ title: "mine" }]);
    expect((await t.request("GET", "/api/v1/billing/subscription", { bearer })).status).toBe(200);
    expect((await t.request("GET", "/api/v1/account/activity", { bearer })).status).toBe(200);
    // The app's own server, checking the token, learns it must not write on the tenant's behalf.
    const me = (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.id;
    const intro = await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, body: {}, headers: { authorization: `Bearer ${bearer.accessToken}` } });
    expect(intro.body).toEqual({ active: true, tenantId: tenant.id, appId: t.app.id, exp: opened.expiresAt, parentTenantId: null, impersonatedBy: me });
    const own = await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, body: {}, headers: { authorization: `Bearer ${tenant.accessToken}` } });
    expect(own.body).not.toHaveProperty("impersonatedBy");
  });

  it("every write route of the tenant API refuses it with 403 impersonation_read_only, and nothing changes", async () => {
    const { t, tenant, bearer, noteId } = await impersonating();
    const writes = OPERATIONS.filter((o) => o.security === "tenant" && o.method !== "GET");
    expect(writes.length).toBeGreaterThan(25);
    const fill = (path: string) => path.replace(/:collection/g, "notes").replace(/:(id|featureKey)/g, (_, p: string) => (p === "id" ? noteId : "seats")).replace(/:[A-Za-z]+/g, "x");
    const answers: { route: string; status: number; error: string }[] = [];
    for (const op of writes) {
      const opts = op.body === "multipart"
        ? { bearer, raw: multipart([{ name: "file", filename: "a.txt", type: "text/plain", data: Buffer.from("hi") }]), headers: { "content-type": "multipart/form-data; boundary=----tenantdTestBoundary7MA4YWxkTrZu0gW" } }
        : { bearer, body: op.path.endsWith("/totp/confirm") ? { code: "000000" } : {} }; // it reads a ticket or the bearer: the body first
      const res = await t.request(op.method, fill(op.path), opts);
      answers.push({ route: `${op.method} ${op.path}`, status: res.status, error: res.body?.error });
    }
    expect(answers.filter((a) => a.error !== "impersonation_read_only" || a.status !== 403)).toEqual([]);
    // The export is a read, but a step-up action: never with an impersonation session.
    expectError(await t.request("GET", "/api/v1/account/export", { bearer }), 403, "impersonation_read_only");
    expect(await records(t, tenant)).toHaveLength(1);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).status).toBe(200);
    // The tenant's own session writes as before.
    expect((await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { title: "still mine" } } })).status).toBe(201);
  });

  it("expires after 15 minutes, ends early on request, and cannot be refreshed", async () => {
    const { t, developer, tenantPath, opened, bearer } = await impersonating();
    t.clock.advance(15 * 60_000 - 1000);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer })).status).toBe(200);
    t.clock.advance(1000);
    expectError(await t.request("GET", "/api/v1/auth/me", { bearer }), 401, "token_expired");

    const again = await t.request("POST", `${tenantPath}/impersonate`, { developer });
    const second = { accessToken: again.body.accessToken as string, appId: t.app.id };
    expect((await t.request("DELETE", `${tenantPath}/impersonate/${again.body.sessionId}`, { developer })).status).toBe(204);
    expectError(await t.request("GET", "/api/v1/auth/me", { bearer: second }), 401, "session_ended");
    // Only impersonation sessions of this tenant end this way.
    expectError(await t.request("DELETE", `${tenantPath}/impersonate/${opened.sessionId}x`, { developer }), 404, "not_found");
  });

  it("is audited with the developer as actor; another developer's app is a 404", async () => {
    const { t, developer, tenant, tenantPath, opened } = await impersonating();
    const me = (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.id;
    await t.request("DELETE", `${tenantPath}/impersonate/${opened.sessionId}`, { developer });
    const trail = (await t.backend.admin.listAudit(t.app.id, { action: "tenant.impersonat*" })).entries;
    expect(trail.map((e) => e.action)).toEqual(["tenant.impersonation_ended", "tenant.impersonated"]);
    expect(trail[1]).toMatchObject({ actor: { type: "developer", id: me }, tenantId: tenant.id, target: opened.sessionId, client: "DashboardBrowser/1", details: { readOnly: true, expiresAt: opened.expiresAt } });

    const stranger = await developerSession(t);
    expectError(await t.request("POST", `${tenantPath}/impersonate`, { developer: stranger }), 404, "not_found");
  });
});
