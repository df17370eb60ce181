// Every completed sign-in is one `tenant.signed_in` entry naming its method and client
// (docs/audit.md), whichever route completed it; a sign-in stopped at the MFA ticket is
// recorded when the second factor completes it. Step-up re-authentication is recorded too.
import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { enrolTotp, login, totpCode, verify } from "./_mfa.ts";
import { softAuthenticator } from "./_passkey.ts";
import { outboxFor } from "./_email.ts";
import { PASSWORD } from "./_auth.ts";

const ORIGIN = "https://app.example.com";
const UA = { "user-agent": "AuditBrowser/1" };

const signIns = async (t: TestBackend, tenantId?: string) =>
  (await t.backend.admin.listAudit(t.app.id, { action: "tenant.signed_in", ...(tenantId && { tenant: tenantId }) })).entries;

async function registerPasskey(t: TestBackend, tenant: TestTenant) {
  const device = softAuthenticator(ORIGIN);
  const options = await t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} });
  expect(options.status, options.text).toBe(200);
  const res = await t.request("POST", "/api/v1/auth/passkeys/register", { bearer: tenant.bearer, body: { credential: device.create(options.body) } });
  expect(res.status, res.text).toBe(201);
  return device;
}

describe("audit trail: every sign-in", () => {
  it("a password sign-in with TOTP is one entry, written when the code completes it (password+totp)", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    const first = await login(t, tenant.email, PASSWORD, UA);
    expect(first.body).toMatchObject({ mfaRequired: true });
    expect(await signIns(t, tenant.id)).toEqual([]);
    const done = await verify(t, { mfaTicket: first.body.mfaTicket, code: totpCode(t, secret) }, UA);
    expect(done.status, done.text).toBe(200);
    const entries = await signIns(t, tenant.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ actor: { type: "tenant", id: tenant.id }, client: "AuditBrowser/1", details: { method: "password+totp" } });
  });

  it("a recovery code completing the MFA step names it (password+recovery_code)", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { recoveryCodes } = await enrolTotp(t, tenant);
    const first = await login(t, tenant.email);
    expect((await verify(t, { mfaTicket: first.body.mfaTicket, recoveryCode: recoveryCodes[0] })).status).toBe(200);
    expect((await signIns(t, tenant.id)).map((e) => e.details?.method)).toEqual(["password+recovery_code"]);
  });

  it("an app that requires MFA: the enrolment with the ticket completes the sign-in and is recorded once", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { requireMfa: true } } });
    const first = await login(t, tenant.email);
    expect(first.body).toMatchObject({ mfaRequired: true, enrollmentRequired: true });
    const key = t.app.publishableKey;
    const start = await t.request("POST", "/api/v1/auth/mfa/totp", { key, body: { mfaTicket: first.body.mfaTicket } });
    expect(start.status, start.text).toBe(200);
    expect(await signIns(t, tenant.id)).toEqual([]);
    const confirm = await t.request("POST", "/api/v1/auth/mfa/totp/confirm", { key, headers: UA, body: { mfaTicket: first.body.mfaTicket, code: totpCode(t, start.body.secret) } });
    expect(confirm.status, confirm.text).toBe(200);
    const entries = await signIns(t, tenant.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ client: "AuditBrowser/1", details: { method: "password+totp" } });
  });

  it("a passkey sign-in is one entry (passkey)", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [ORIGIN] } });
    const tenant = await signupTenant(t);
    const device = await registerPasskey(t, tenant);
    const options = await t.request("POST", "/api/v1/auth/passkeys/options", { key: t.app.publishableKey, body: {} });
    const res = await t.request("POST", "/api/v1/auth/passkeys/sign-in", { key: t.app.publishableKey, headers: UA, body: { credential: device.get(options.body) } });
    expect(res.status, res.text).toBe(200);
    const entries = await signIns(t, tenant.id);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ client: "AuditBrowser/1", details: { method: "passkey" } });
  });

  it("an email code and a magic link are one entry each (email_code, magic_link)", async () => {
    const t = await startBackend();
    const page = "https://app.example.com/signed-in";
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { emailSignIn: true }, oauth: { redirectUrls: [page] } } });
    const tenant = await signupTenant(t);
    const key = t.app.publishableKey;
    const mailed = async () => (await outboxFor(t, tenant.email)).filter((m) => m.kind === "sign-in")[0]!;

    expect((await t.request("POST", "/api/v1/auth/email-sign-in", { key, body: { email: tenant.email } })).status).toBe(202);
    const code = /\b(\d{6})\b/.exec((await mailed()).subject)![1]!;
    expect((await t.request("POST", "/api/v1/auth/email-sign-in/verify", { key, headers: UA, body: { email: tenant.email, code } })).status).toBe(200);

    expect((await t.request("POST", "/api/v1/auth/email-sign-in", { key, body: { email: tenant.email, redirectUrl: page } })).status).toBe(202);
    const token = new URLSearchParams(new URL((await mailed()).link!).hash.slice(1)).get("service_email_token");
    expect((await t.request("POST", "/api/v1/auth/email-sign-in/verify", { key, body: { token } })).status).toBe(200);

    expect((await signIns(t, tenant.id)).map((e) => e.details?.method)).toEqual(["magic_link", "email_code"]);
  });

  it("an anonymous sign-in is one entry (anonymous)", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { anonymous: true } } });
    const res = await t.request("POST", "/api/v1/auth/anonymous", { key: t.app.publishableKey, headers: UA, body: {} });
    expect(res.status, res.text).toBe(201);
    const entries = await signIns(t);
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({ tenantId: res.body.tenant.id, client: "AuditBrowser/1", details: { method: "anonymous" } });
  });
});

describe("audit trail: step-up", () => {
  it("records re-authentication with its method, a password change and new recovery codes", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { secret } = await enrolTotp(t, tenant);
    const trail = async (action: string) => (await t.backend.admin.listAudit(t.app.id, { action, tenant: tenant.id })).entries;

    expect((await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, headers: UA, body: { password: PASSWORD } })).status).toBe(200);
    expect((await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body: { code: totpCode(t, secret) } })).status).toBe(200);
    expectError(await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body: { password: "not the password" } }), 401, "invalid_credentials");
    const reauth = await trail("tenant.reauthenticated");
    expect(reauth.map((e) => e.details?.method)).toEqual(["totp", "password"]);
    expect(reauth[1]).toMatchObject({ actor: { type: "tenant", id: tenant.id }, client: "AuditBrowser/1" });

    expect((await t.request("POST", "/api/v1/auth/mfa/recovery-codes", { bearer: tenant.bearer, body: {} })).status).toBe(200);
    expect(await trail("tenant.recovery_codes_regenerated")).toHaveLength(1);
    expect((await t.request("POST", "/api/v1/auth/change-password", { bearer: tenant.bearer, body: { newPassword: "another long password" } })).status).toBe(200);
    expect(await trail("tenant.password_changed")).toHaveLength(1);
  });
});
