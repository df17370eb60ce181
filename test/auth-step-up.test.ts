// Issue 42 part A: sensitive actions need a recent authentication (step-up).
import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { PASSWORD, refresh } from "./_auth.ts";
import { enrolTotp, login, totpCode, verify } from "./_mfa.ts";

const reauth = (t: TestBackend, tenant: TestTenant, body: Record<string, unknown>) => t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body });
const STALE = 10 * 60_000 + 1;

describe("step-up", () => {
  it("deleting the account after the window asks for re-authentication, which restarts it", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    t.clock.advance(STALE);
    const refused = await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer });
    expectError(refused, 403, "reauthentication_required");
    expect(refused.body.message).toMatch(/^Deleting the account needs a sign-in within the last 10 minutes\. .*POST \/api\/v1\/auth\/reauthenticate/);
    // Still there.
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).status).toBe(200);
    const ok = await reauth(t, tenant, { password: PASSWORD });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ ok: true, authenticatedAt: new Date(t.clock()).toISOString(), stepUpSeconds: 600 });
    expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer })).status).toBe(200);
  });

  it("a refreshed session keeps its sign-in time: refreshing is not re-authenticating", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    t.clock.advance(STALE);
    const next = await refresh(t, tenant.refreshToken);
    const bearer = { accessToken: next.body.accessToken, appId: t.app.id };
    expectError(await t.request("POST", "/api/v1/tenants/me/delete", { bearer }), 403, "reauthentication_required");
  });

  it("the billing portal is a sensitive action too", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    t.clock.advance(STALE);
    const body = { returnUrl: "http://localhost:3000/account" };
    expectError(await t.request("POST", "/api/v1/billing/portal", { bearer: tenant.bearer, body }), 403, "reauthentication_required");
    await reauth(t, tenant, { password: PASSWORD });
    expect((await t.request("POST", "/api/v1/billing/portal", { bearer: tenant.bearer, body })).body.error).not.toBe("reauthentication_required");
  });

  it("settings.auth.stepUpSeconds sets the window", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { stepUpSeconds: 60 } } });
    const tenant = await signupTenant(t);
    t.clock.advance(61_000);
    const refused = await t.request("POST", "/api/v1/auth/change-password", { bearer: tenant.bearer, body: { newPassword: "another long password" } });
    expectError(refused, 403, "reauthentication_required");
    expect(refused.body.message).toContain("within the last 1 minute.");
    await expect(t.backend.admin.updateApp(t.app.id, { settings: { auth: { stepUpSeconds: 5 } } })).rejects.toThrow(/at least 30/);
  });

  it("re-authentication refuses a wrong password or code, no proof, or two proofs; an MFA tenant re-authenticates with its code", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    t.clock.advance(STALE);
    expectError(await reauth(t, tenant, { password: "not the password" }), 401, "invalid_credentials");
    expectError(await reauth(t, tenant, { code: "000000" === totpCode(t, secret) ? "111111" : "000000" }), 401, "invalid_credentials");
    expectError(await reauth(t, tenant, {}), 400, "invalid_request");
    expectError(await reauth(t, tenant, { password: PASSWORD, code: totpCode(t, secret) }), 400, "invalid_request");
    expectError(await reauth(t, tenant, { password: 42 }), 400, "invalid_request");
    expectError(await t.request("DELETE", "/api/v1/auth/mfa/totp", { bearer: tenant.bearer }), 403, "reauthentication_required");
    expect((await reauth(t, tenant, { code: totpCode(t, secret) })).status).toBe(200);
    expect((await t.request("DELETE", "/api/v1/auth/mfa/totp", { bearer: tenant.bearer })).status).toBe(204);
  });

  it("a sign-in with MFA is recent: its session may act at once", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    t.clock.advance(STALE);
    const { body } = await login(t, tenant.email);
    const signedIn = await verify(t, { mfaTicket: body.mfaTicket, code: totpCode(t, secret) });
    const bearer = { accessToken: signedIn.body.accessToken, appId: t.app.id };
    expect((await t.request("DELETE", "/api/v1/auth/mfa/totp", { bearer })).status).toBe(204);
  });
});

describe("change password", () => {
  it("sets the new password, ends the other sessions and keeps this one", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const other = await login(t, tenant.email);
    expectError(await t.request("POST", "/api/v1/auth/change-password", { bearer: tenant.bearer, body: { newPassword: "short" } }), 400, "invalid_request");
    expect((await t.request("POST", "/api/v1/auth/change-password", { bearer: tenant.bearer, body: { newPassword: "another long password" } })).status).toBe(200);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).status).toBe(200);
    expectError(await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: other.body.accessToken, appId: t.app.id } }), 401, "session_ended");
    expectError(await login(t, tenant.email), 401, "invalid_credentials");
    expect((await login(t, tenant.email, "another long password")).status).toBe(200);
  });
});
