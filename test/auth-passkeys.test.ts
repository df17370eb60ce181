// Issue 42 part A: passkeys (WebAuthn) as a first factor, a second factor and for step-up,
// with software credentials: real keys and signatures (test/_passkey.ts).
import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";
import { softAuthenticator } from "./_passkey.ts";
import { enrolTotp, login, verify } from "./_mfa.ts";
import { outboxFor } from "./_email.ts";

const ORIGIN = "https://app.example.com";



async function passkeyBackend(): Promise<TestBackend> {
  const t = await startBackend();
  await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [ORIGIN] } });
  return t;
}

async function register(t: TestBackend, tenant: TestTenant, device = softAuthenticator(ORIGIN), name?: string) {
  const options = await t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} });
  expect(options.status, options.text).toBe(200);
  expect(options.body).toMatchObject({ rp: { id: "app.example.com" }, attestation: "none", authenticatorSelection: { residentKey: "required", userVerification: "required" } });
  const res = await t.request("POST", "/api/v1/auth/passkeys/register", { bearer: tenant.bearer, body: { credential: device.create(options.body), ...(name && { name }) } });
  expect(res.status, res.text).toBe(201);
  return { device, passkey: res.body.passkey };
}

const options = (t: TestBackend, body: Record<string, unknown> = {}) => t.request("POST", "/api/v1/auth/passkeys/options", { key: t.app.publishableKey, body });
const signIn = (t: TestBackend, credential: unknown) => t.request("POST", "/api/v1/auth/passkeys/sign-in", { key: t.app.publishableKey, body: { credential } });

describe("passkey registration and management", () => {
  it("registers, lists, renames; the tenant is told by email and the app by webhook event", async () => {
    const t = await startBackend({ webhooks: { allowInsecure: true } });
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [ORIGIN] } });
    const developer = await developerSession(t);
    const rx = await startReceiver();
    await configureWebhook(t, developer, rx.url);
    const tenant = await signupTenant(t);
    const { passkey } = await register(t, tenant, undefined, "Laptop");
    expect(passkey).toMatchObject({ id: expect.stringMatching(/^pk_/), name: "Laptop", lastUsedAt: null });
    const renamed = await t.request("PATCH", `/api/v1/auth/passkeys/${passkey.id}`, { bearer: tenant.bearer, body: { name: "Work laptop" } });
    expect(renamed.body.passkey.name).toBe("Work laptop");
    expect((await t.request("GET", "/api/v1/auth/passkeys", { bearer: tenant.bearer })).body.passkeys).toEqual([expect.objectContaining({ id: passkey.id, name: "Work laptop" })]);
    expectError(await t.request("PATCH", "/api/v1/auth/passkeys/pk_other", { bearer: tenant.bearer, body: { name: "x" } }), 404, "not_found");
    expect((await outboxFor(t, tenant.email)).map((m) => m.kind)).toContain("security:passkey.added");
    await finishedDeliveries(t, developer, 1);
    const sent = rx.received.map((r) => JSON.parse(r.raw.toString()) as { event: string; tenantId: string; payload: unknown });
    expect(sent).toEqual([expect.objectContaining({ event: "tenant.security", tenantId: tenant.id, payload: { type: "passkey.added", passkeyId: passkey.id, name: "Laptop" } })]);
  });

  it("refuses a registration from another origin, for another RP, without user verification, or answering a used challenge", async () => {
    const t = await passkeyBackend();
    const tenant = await signupTenant(t);
    const device = softAuthenticator(ORIGIN);
    const fresh = async () => (await t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} })).body;
    const post = (credential: unknown) => t.request("POST", "/api/v1/auth/passkeys/register", { bearer: tenant.bearer, body: { credential } });
    expectError(await post(device.create(await fresh(), { origin: "https://evil.example.net" })), 400, "invalid_request");
    expectError(await post(device.create(await fresh(), { rpId: "evil.example.net" })), 400, "invalid_request");
    expectError(await post(device.create(await fresh(), { uv: false })), 400, "invalid_request");
    const good = device.create(await fresh());
    expect((await post(good)).status).toBe(201);
    expectError(await post(good), 400, "invalid_token");
    expectError(await post({ id: "x" }), 400, "invalid_request");
    expect((await t.request("GET", "/api/v1/auth/passkeys", { bearer: tenant.bearer })).body.passkeys).toHaveLength(1);
  });

  it("removing a passkey needs a recent sign-in; a passkey re-authenticates", async () => {
    const t = await passkeyBackend();
    const tenant = await signupTenant(t);
    const { device, passkey } = await register(t, tenant);
    t.clock.advance(11 * 60_000);
    expectError(await t.request("DELETE", `/api/v1/auth/passkeys/${passkey.id}`, { bearer: tenant.bearer }), 403, "reauthentication_required");
    const opts = await t.request("POST", "/api/v1/auth/passkeys/options", { key: t.app.publishableKey, bearer: tenant.bearer, body: { purpose: "reauthenticate" } });
    expect(opts.status, opts.text).toBe(200);
    const re = await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: tenant.bearer, body: { passkey: device.get(opts.body) } });
    expect(re.status, re.text).toBe(200);
    expect((await t.request("DELETE", `/api/v1/auth/passkeys/${passkey.id}`, { bearer: tenant.bearer })).status).toBe(204);
    expect((await outboxFor(t, tenant.email)).map((m) => m.kind)).toContain("security:passkey.removed");
    // Gone: it signs in no more.
    expectError(await signIn(t, device.get((await options(t)).body)), 401, "invalid_credentials");
  });
});

describe("passkey sign-in", () => {
  it("with a discoverable credential (no email) and with an email; no MFA ticket after a verified passkey", async () => {
    const t = await passkeyBackend();
    const tenant = await signupTenant(t);
    const { device } = await register(t, tenant);
    await enrolTotp(t, tenant);
    const discoverable = await options(t);
    expect(discoverable.body).toMatchObject({ rpId: "app.example.com", userVerification: "required" });
    expect(discoverable.body.allowCredentials ?? []).toEqual([]);
    const first = await signIn(t, device.get(discoverable.body));
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({ tenant: { id: tenant.id }, accessToken: expect.any(String) });

    const byEmail = await options(t, { email: tenant.email.toUpperCase() });
    expect(byEmail.body.allowCredentials).toEqual([expect.objectContaining({ id: device.credentials[0]!.id.toString("base64url") })]);
    expect((await signIn(t, device.get(byEmail.body))).status).toBe(200);
    expect((await t.request("GET", "/api/v1/auth/passkeys", { bearer: tenant.bearer })).body.passkeys[0].lastUsedAt).not.toBeNull();
  });

  it("an unknown email gets options that look like a known one's, the same each time", async () => {
    const t = await passkeyBackend();
    const a = await options(t, { email: "nobody@example.com" });
    const b = await options(t, { email: "nobody@example.com" });
    expect(a.body.allowCredentials).toHaveLength(1);
    expect(a.body.allowCredentials[0].id).toBe(b.body.allowCredentials[0].id);
    expect(a.body.challenge).not.toBe(b.body.challenge);
  });

  it("refuses replayed, expired and foreign challenges, wrong origin or RP id, a counter that goes back, no user verification: never a session", async () => {
    const t = await passkeyBackend();
    const tenant = await signupTenant(t);
    const { device } = await register(t, tenant);
    const fresh = async () => (await options(t)).body;

    const replayed = device.get(await fresh());
    expect((await signIn(t, replayed)).status).toBe(200);
    const again = await signIn(t, replayed);
    expectError(again, 400, "invalid_token");
    expect(again.body.message).toMatch(/already used/);

    const late = await fresh();
    t.clock.advance(5 * 60_000 + 1);
    expectError(await signIn(t, device.get(late)), 400, "invalid_token");

    // Another app's challenge, and a registration challenge, are unknown to this sign-in.
    const other = await t.backend.admin.createApp({ name: "other", settings: { corsOrigins: [ORIGIN] } });
    const foreign = await t.request("POST", "/api/v1/auth/passkeys/options", { key: other.publishableKey, body: {} });
    expectError(await signIn(t, device.get(foreign.body)), 400, "invalid_token");
    const reg = await t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} });
    expectError(await signIn(t, device.get({ challenge: reg.body.challenge, rpId: "app.example.com" })), 400, "invalid_token");

    expectError(await signIn(t, device.get(await fresh(), { origin: "https://evil.example.net" })), 401, "invalid_credentials");
    expectError(await signIn(t, device.get(await fresh(), { rpId: "evil.example.net" })), 401, "invalid_credentials");
    expectError(await signIn(t, device.get(await fresh(), { uv: false })), 401, "invalid_credentials");
    // The app last saw counter 1 (the one sign-in that passed); the refused ones never counted.
    const stored = (await t.backend.core.db.mfa.passkeys(t.app.id, tenant.id))[0]!.counter;
    expect(stored).toBe(1);
    expectError(await signIn(t, device.get(await fresh(), { counter: stored })), 401, "invalid_credentials");
    const back = await signIn(t, device.get(await fresh(), { counter: stored - 1 }));
    expectError(back, 401, "invalid_credentials");
    expect(back.body.message).toMatch(/counter/);
    // A credential this app never registered.
    expectError(await signIn(t, softAuthenticator(ORIGIN).get(await fresh(), { credential: { ...device.credentials[0]!, id: Buffer.from("unknown-cred") } })), 401, "invalid_credentials");
    expectError(await signIn(t, { id: "x", rawId: "x", type: "public-key", response: {} }), 400, "invalid_request");
    expectError(await signIn(t, device.get({ challenge: "!!", rpId: "app.example.com" })), 400, "invalid_token");
  });

  it("needs the app's origin in settings; can be turned off per app", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [] } });
    expectError(await options(t), 400, "invalid_request");
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [ORIGIN], auth: { passkeys: { enabled: false } } } });
    expectError(await options(t), 403, "forbidden");
  });
});

describe("a passkey as the second factor", () => {
  it("answers the MFA ticket of a password login", async () => {
    const t = await passkeyBackend();
    const tenant = await signupTenant(t);
    const { device } = await register(t, tenant);
    await enrolTotp(t, tenant);
    const first = await login(t, tenant.email);
    expect(first.body.methods).toEqual(["totp", "recovery_code", "passkey"]);
    const opts = await options(t, { mfaTicket: first.body.mfaTicket });
    expect(opts.body.allowCredentials).toHaveLength(1);
    // Another tenant's passkey does not answer this ticket.
    const other = await signupTenant(t);
    const { device: otherDevice } = await register(t, other);
    expectError(await verify(t, { mfaTicket: first.body.mfaTicket, passkey: otherDevice.get(opts.body) }), 401, "invalid_credentials");
    const opts2 = await options(t, { mfaTicket: first.body.mfaTicket });
    const ok = await verify(t, { mfaTicket: first.body.mfaTicket, passkey: device.get(opts2.body) });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.tenant.id).toBe(tenant.id);
  });
});

describe("settings.auth.requireMfa with a passkey", () => {
  it("a tenant whose only second factor is a passkey answers its ticket with it, not with an enrolment", async () => {
    const t = await passkeyBackend();
    const tenant = await signupTenant(t);
    const { device } = await register(t, tenant);
    await t.backend.admin.updateApp(t.app.id, { settings: { auth: { requireMfa: true } } });
    const first = await login(t, tenant.email);
    expect(first.body).toMatchObject({ mfaRequired: true, methods: ["passkey"], enrollmentRequired: false });
    const opts = await options(t, { mfaTicket: first.body.mfaTicket });
    expect((await verify(t, { mfaTicket: first.body.mfaTicket, passkey: device.get(opts.body) })).status).toBe(200);
  });
});
