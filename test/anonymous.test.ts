import { describe, expect, it } from "vitest";
import type { TenantBackendConfig } from "../src/index.ts";
import { expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { BOUNDARY, multipart } from "./files-helpers.ts";
import { outboxFor } from "./_email.ts";
import { PASSWORD, refresh } from "./_auth.ts";
import { runMaintenance } from "../src/maintenance.ts";
import { storeRows } from "./_store.ts";
import { softAuthenticator } from "./_passkey.ts";
import { authorize, begin, callback, fragmentOf, oauthBackend, useFakeOAuth } from "./oauth-helpers.ts";

const DAY = 24 * 3600 * 1000;

async function anonymousBackend(config: TenantBackendConfig = {}): Promise<TestBackend> {
  const t = await startBackend(config);
  await t.backend.admin.updateApp(t.app.id, { settings: { auth: { anonymous: true } } });
  return t;
}
const anonymous = (t: TestBackend) => t.request("POST", "/api/v1/auth/anonymous", { key: t.app.publishableKey, body: {} });

/** An anonymous tenant holding a record and a file. */
async function withData(t: TestBackend) {
  const res = await anonymous(t);
  expect(res.status, res.text).toBe(201);
  const bearer = { accessToken: res.body.accessToken as string, appId: t.app.id };
  const record = await t.request("POST", "/api/v1/data/notes", { bearer, body: { data: { text: "kept" } } });
  expect(record.status, record.text).toBe(201);
  const file = await t.request("POST", "/api/v1/files/upload", { bearer, raw: multipart([{ filename: "a.txt", type: "text/plain", data: "file bytes" }]), headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } });
  expect(file.status, file.text).toBe(201);
  return { res, bearer, tenantId: res.body.tenant.id as string, recordId: record.body.record.id as string, fileId: file.body.file.id as string, refreshToken: res.body.refreshToken as string };
}

describe("anonymous tenants (issue 42)", () => {
  it("is off until the app turns it on", async () => {
    const t = await startBackend();
    expectError(await anonymous(t), 403, "forbidden");
  });

  it("gives a tenant without an email that holds records and files", async () => {
    const t = await anonymousBackend();
    const { res } = await withData(t);
    expect(res.body).toMatchObject({ anonymous: true, tenant: { id: expect.stringMatching(/^tnt_/), email: expect.stringMatching(/@anonymous\.invalid$/), emailVerifiedAt: null }, refreshToken: expect.stringMatching(/^rt_/) });
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("upgrades to email and password keeping its id, session and data; the address gets a verification email", async () => {
    const t = await anonymousBackend();
    const a = await withData(t);
    const up = await t.request("POST", "/api/v1/auth/anonymous/upgrade", { bearer: a.bearer, body: { email: "Kept@Example.com", password: PASSWORD } });
    expect(up.status, up.text).toBe(200);
    expect(up.body.tenant).toMatchObject({ id: a.tenantId, email: "kept@example.com", emailVerifiedAt: null });
    // The same session goes on, and the password signs in to the same tenant and its data.
    expect((await t.request("GET", `/api/v1/data/notes/${a.recordId}`, { bearer: a.bearer })).status).toBe(200);
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "kept@example.com", password: PASSWORD } });
    expect(login.body.tenant.id).toBe(a.tenantId);
    expect((await t.request("GET", `/api/v1/files/${a.fileId}`, { bearer: { accessToken: login.body.accessToken, appId: t.app.id } })).status).toBe(200);
    expect((await outboxFor(t, "kept@example.com")).map((m) => m.kind)).toContain("verify");
    expectError(await t.request("POST", "/api/v1/auth/anonymous/upgrade", { bearer: a.bearer, body: { email: "again@example.com", password: PASSWORD } }), 409, "conflict");
  });

  it("refuses an upgrade to an email another account has, or a weak password, and stays anonymous", async () => {
    const t = await anonymousBackend();
    await signupTenant(t, { email: "taken@example.com" });
    const a = await withData(t);
    expectError(await t.request("POST", "/api/v1/auth/anonymous/upgrade", { bearer: a.bearer, body: { email: "taken@example.com", password: PASSWORD } }), 409, "email_exists");
    expectError(await t.request("POST", "/api/v1/auth/anonymous/upgrade", { bearer: a.bearer, body: { email: "free@example.com", password: "short" } }), 400, "invalid_request");
    expect((await t.request("POST", "/api/v1/auth/anonymous/upgrade", { bearer: a.bearer, body: { email: "free@example.com", password: PASSWORD } })).status).toBe(200);
  });

  it("limits anonymous sign-ins per IP", async () => {
    const t = await anonymousBackend({ rateLimit: { windowSeconds: 60, perIp: 2, perEmail: 100 } });
    expect((await anonymous(t)).status).toBe(201);
    expect((await anonymous(t)).status).toBe(201);
    expectError(await anonymous(t), 429, "rate_limited");
  });

  it("maintenance deletes anonymous tenants idle for the app's days, with their data; active and upgraded ones stay", async () => {
    const t = await anonymousBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { anonymousIdleDays: 7 } } });
    const idle = await withData(t);
    const active = await withData(t);
    const upgraded = await withData(t);
    await t.request("POST", "/api/v1/auth/anonymous/upgrade", { bearer: upgraded.bearer, body: { email: "stays@example.com", password: PASSWORD } });
    t.clock.advance(6 * DAY);
    expect((await refresh(t, active.refreshToken)).status).toBe(200);
    await runMaintenance(t.backend.core);
    expect(await t.backend.core.db.tenants.findById(t.app.id, idle.tenantId)).toBeDefined();
    t.clock.advance(1 * DAY + 1);
    await runMaintenance(t.backend.core);
    expect(await t.backend.core.db.tenants.findById(t.app.id, idle.tenantId)).toBeUndefined();
    expect(await storeRows(t.backend).value("SELECT count(*) FROM records WHERE tenant_id = ?", idle.tenantId)).toBe(0);
    expect(await t.backend.core.db.tenants.findById(t.app.id, active.tenantId)).toBeDefined();
    expect(await t.backend.core.db.tenants.findById(t.app.id, upgraded.tenantId)).toBeDefined();
  });
});

describe("anonymous tenants upgrade with a passkey (issue 42)", () => {
  it("registering a passkey keeps the tenant's id and data, signs it back in, and idle cleanup no longer deletes it", async () => {
    const origin = "https://app.example.com";
    const t = await anonymousBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [origin], auth: { anonymousIdleDays: 7 } } });
    const a = await withData(t);
    const device = softAuthenticator(origin);
    const options = await t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: a.bearer, body: {} });
    expect(options.status, options.text).toBe(200);
    const reg = await t.request("POST", "/api/v1/auth/passkeys/register", { bearer: a.bearer, body: { credential: device.create(options.body) } });
    expect(reg.status, reg.text).toBe(201);
    // No address to tell: a stand-in never delivers.
    expect(await outboxFor(t, `${a.tenantId}@anonymous.invalid`)).toEqual([]);

    t.clock.advance(8 * DAY);
    await runMaintenance(t.backend.core);
    expect(await t.backend.core.db.tenants.findById(t.app.id, a.tenantId)).toBeDefined();
    const signIn = await t.request("POST", "/api/v1/auth/passkeys/options", { key: t.app.publishableKey, body: {} });
    const back = await t.request("POST", "/api/v1/auth/passkeys/sign-in", { key: t.app.publishableKey, body: { credential: device.get(signIn.body) } });
    expect(back.status, back.text).toBe(200);
    expect(back.body.tenant.id).toBe(a.tenantId);
    const bearer = { accessToken: back.body.accessToken as string, appId: t.app.id };
    expect((await t.request("GET", `/api/v1/data/notes/${a.recordId}`, { bearer })).body.record.data).toEqual({ text: "kept" });
    // No longer anonymous: the email upgrade is for anonymous tenants only.
    expectError(await t.request("POST", "/api/v1/auth/anonymous/upgrade", { bearer, body: { email: "later@example.com", password: PASSWORD } }), 409, "conflict");
  });
});

describe("anonymous tenants upgrade by social login (issue 42)", () => {
  const fake = useFakeOAuth();

  it("links the provider account to the anonymous tenant: same id and data, the provider's verified email", async () => {
    const t = await oauthBackend(fake);
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { anonymous: true } } });
    const a = await withData(t);
    const token = await t.request("POST", "/api/v1/auth/anonymous/upgrade-token", { bearer: a.bearer });
    expect(token.status, token.text).toBe(200);
    expect(token.body).toEqual({ upgradeToken: expect.stringMatching(/^aup_/), expiresIn: 900 });
    const started = await begin(t, "google", { upgradeToken: token.body.upgradeToken });
    expect(started.reply.status, started.reply.text).toBe(302);
    const back = await authorize(fake, "google", started.location, { id: "g-anon-1", email: "social@example.com" });
    const fragment = fragmentOf(await callback(t, back, started.cookie));
    expect(fragment.get("service_oauth"), fragment.toString()).toBe("success");
    const bearer = { accessToken: fragment.get("service_access_token")!, appId: t.app.id };
    const me = await t.request("GET", "/api/v1/auth/me", { bearer });
    expect(me.body.tenant).toMatchObject({ id: a.tenantId, email: "social@example.com", emailVerifiedAt: expect.any(String) });
    expect((await t.request("GET", `/api/v1/data/notes/${a.recordId}`, { bearer })).status).toBe(200);
    // No longer anonymous: another upgrade token is refused.
    expectError(await t.request("POST", "/api/v1/auth/anonymous/upgrade-token", { bearer }), 409, "conflict");
  });

  it("refuses a forged upgrade token at the start, and a provider account that already has a tenant", async () => {
    const t = await oauthBackend(fake);
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { anonymous: true } } });
    const forged = await begin(t, "google", { upgradeToken: "aup_eyJ0IjoidG50X3gifQ.bad" });
    expectError(forged.reply, 400, "invalid_token");
    // The provider account signs up first…
    const first = await begin(t, "google");
    const firstBack = await authorize(fake, "google", first.location, { id: "g-taken", email: "taken-g@example.com" });
    expect(fragmentOf(await callback(t, firstBack, first.cookie)).get("service_oauth")).toBe("success");
    // …then an anonymous tenant tries to upgrade with it.
    const a = await withData(t);
    const token = (await t.request("POST", "/api/v1/auth/anonymous/upgrade-token", { bearer: a.bearer })).body.upgradeToken as string;
    const started = await begin(t, "google", { upgradeToken: token });
    const back = await authorize(fake, "google", started.location, { id: "g-taken", email: "taken-g@example.com" });
    const fragment = fragmentOf(await callback(t, back, started.cookie));
    expect([fragment.get("service_oauth"), fragment.get("error"), fragment.get("service_access_token")]).toEqual(["error", "conflict", null]);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: a.bearer })).body.tenant.email).toMatch(/@anonymous\.invalid$/);
  });
});
