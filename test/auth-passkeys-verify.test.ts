// Issue 42's passkey sign-in made cheaper (bench/NOTES.md): an ES256 signature checked with a
// KeyObject kept per key, other keys through @simplewebauthn/server, and the counter and the
// session written at once. What the cheaper path must still refuse, alone and under races.
import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { softAuthenticator, type SoftKeyType } from "./_passkey.ts";

const ORIGIN = "https://app.example.com";

async function setup(keyType: SoftKeyType = "es256") {
  const t = await startBackend();
  await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [ORIGIN] } });
  const tenant = await signupTenant(t);
  const device = softAuthenticator(ORIGIN, keyType);
  const reg = await t.request("POST", "/api/v1/auth/passkeys/register/options", { bearer: tenant.bearer, body: {} });
  const res = await t.request("POST", "/api/v1/auth/passkeys/register", { bearer: tenant.bearer, body: { credential: device.create(reg.body) } });
  expect(res.status, res.text).toBe(201);
  const fresh = async () => (await t.request("POST", "/api/v1/auth/passkeys/options", { key: t.app.publishableKey, body: {} })).body;
  const signIn = (credential: unknown) => t.request("POST", "/api/v1/auth/passkeys/sign-in", { key: t.app.publishableKey, body: { credential } });
  return { t, tenant, device, fresh, signIn };
}

type Assertion = ReturnType<ReturnType<typeof softAuthenticator>["get"]>;

/** The same assertion with one byte of its signature's r changed: still DER, no longer the signer's. */
function forged(a: Assertion): Assertion {
  const sig = Buffer.from(a.response.signature, "base64url");
  sig[sig.length === 64 ? 5 : 10]! ^= 0x01;
  return { ...a, response: { ...a.response, signature: sig.toString("base64url") } };
}

/** The tenant's live sessions, counted by ending them: the last look of a test. */
const liveSessions = (t: TestBackend, tenant: TestTenant) => t.backend.core.db.sessions.endAllForTenant(tenant.id, t.clock(), "test");

describe("passkey sign-in checks", () => {
  for (const keyType of ["es256", "ed25519"] as const) {
    it(`${keyType}: signs in, and refuses a forged signature or another key's signature for the credential`, async () => {
      const { device, fresh, signIn } = await setup(keyType);
      const ok = await signIn(device.get(await fresh()));
      expect(ok.status, ok.text).toBe(200);
      const bad = await signIn(forged(device.get(await fresh())));
      expectError(bad, 401, "invalid_credentials");
      expect(bad.body.message).toMatch(/signature/);
      // Another key answering for the registered credential id.
      const impostor = softAuthenticator(ORIGIN, keyType);
      impostor.create({ challenge: "x", rp: { id: "app.example.com" }, user: { id: "x" } });
      const cred = { ...impostor.credentials[0]!, id: device.credentials[0]!.id, counter: 10 };
      expectError(await signIn(impostor.get(await fresh(), { credential: cred })), 401, "invalid_credentials");
      expect((await signIn(device.get(await fresh()))).status).toBe(200);
    });
  }

  it("the same assertion sent twice at once signs in once", async () => {
    const { t, tenant, device, fresh, signIn } = await setup();
    const assertion = device.get(await fresh());
    const replies = await Promise.all([signIn(assertion), signIn(assertion), signIn(assertion)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    for (const r of replies.filter((r) => r.status !== 200)) expectError(r, 400, "invalid_token");
    // The signup's session and one sign-in's.
    expect(await liveSessions(t, tenant)).toBe(2);
  });

  it("two assertions with the same counter at once: one session, the other told the counter did not move", async () => {
    const { t, tenant, device, fresh, signIn } = await setup();
    const [a, b] = [device.get(await fresh(), { counter: 5 }), device.get(await fresh(), { counter: 5 })];
    const replies = await Promise.all([signIn(a), signIn(b)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
    expect(replies.find((r) => r.status === 401)!.body.message).toMatch(/counter/);
    expect(await liveSessions(t, tenant)).toBe(2);
    expect((await t.backend.core.db.mfa.passkeys(t.app.id, tenant.id))[0]!.counter).toBe(5);
  });

  it("refuses a tenant whose sign-in is turned off, with no session, and signs it in once turned back on", async () => {
    const { t, tenant, device, fresh, signIn } = await setup();
    await t.backend.core.db.admin.setSignInDisabled(t.app.id, tenant.id, t.clock());
    const refused = await signIn(device.get(await fresh()));
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toMatch(/turned off/);
    await t.backend.core.db.admin.setSignInDisabled(t.app.id, tenant.id, null);
    const ok = await signIn(device.get(await fresh()));
    expect(ok.status, ok.text).toBe(200);
    // The refused sign-in left no session behind: the signup's and this one.
    expect(await liveSessions(t, tenant)).toBe(2);
  });
});
