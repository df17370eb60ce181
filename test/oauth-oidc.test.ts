import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { begin, callback, fragmentOf, me, REDIRECT } from "./oauth-helpers.ts";
import { ISSUER, startFakeOidc, type FakeOidc, type OidcAccount, type Tamper } from "./fake-oidc.ts";

const CLIENT = { clientId: "tenantd-at-idp", clientSecret: "idp-client-secret" };

let fake: FakeOidc;
let restore: () => void = () => {};
beforeAll(async () => {
  fake = await startFakeOidc(CLIENT);
});
afterAll(() => fake.close());
beforeEach(() => {
  restore = fake.interceptFetch();
});
afterEach(() => restore());

async function oidcBackend(settings: Record<string, unknown> = {}): Promise<TestBackend> {
  const t = await startBackend();
  await t.backend.admin.updateApp(t.app.id, {
    settings: { oauth: { redirectUrls: [REDIRECT], providers: { oidc: { ...CLIENT, issuer: ISSUER, ...settings } } } },
  });
  return t;
}

/** Start at tenantd, sign in at the issuer, come back: the fragment the app reads. */
async function signIn(t: TestBackend, account: OidcAccount, tamper: Tamper | null = null) {
  const started = await begin(t, "oidc");
  expect(started.reply.status, started.reply.text).toBe(302);
  fake.next(account, tamper);
  const res = await fetch(fake.rewrite(started.location), { redirect: "manual" });
  expect(res.status).toBe(302);
  const back = new URL(res.headers.get("location")!);
  return { fragment: fragmentOf(await callback(t, { method: "GET", path: back.pathname + back.search }, started.cookie)), location: new URL(started.location) };
}

describe("generic OpenID Connect provider (issue 42)", () => {
  it("signs in through discovery, PKCE and a validated ID token; the tenant's email is the verified claim", async () => {
    const t = await oidcBackend();
    const { fragment, location } = await signIn(t, { sub: "idp-user-1", email: "Oidc.User@Example.com", emailVerified: true });
    // The authorization request: the discovered endpoint, S256 PKCE, a nonce, the default scopes.
    expect(location.origin + location.pathname).toBe(`${ISSUER}/authorize`);
    expect(Object.fromEntries(location.searchParams)).toMatchObject({
      response_type: "code",
      client_id: CLIENT.clientId,
      redirect_uri: "http://localhost:3000/api/v1/auth/oauth/oidc/callback",
      scope: "openid email",
      code_challenge_method: "S256",
      nonce: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(fragment.get("service_oauth")).toBe("success");
    const who = await me(t, fragment.get("service_access_token")!);
    expect(who.status).toBe(200);
    expect(who.body.tenant).toMatchObject({ email: "oidc.user@example.com", emailVerifiedAt: expect.any(String) });
    // The same subject signs in to the same tenant again.
    const again = await signIn(t, { sub: "idp-user-1", email: "oidc.user@example.com" });
    expect((await me(t, again.fragment.get("service_access_token")!)).body.tenant.id).toBe(who.body.tenant.id);
  });

  it.each<[Tamper]>([["issuer"], ["audience"], ["nonce"], ["signature"], ["unknown-key"], ["expired"], ["alg-none"]])(
    "refuses an ID token with a wrong %s: provider_error, no tenant, no session",
    async (tamper) => {
      const t = await oidcBackend();
      const { fragment } = await signIn(t, { sub: `idp-${tamper}`, email: `${tamper}@example.com` }, tamper);
      expect(fragment.get("service_oauth")).toBe("error");
      expect(fragment.get("error")).toBe("provider_error");
      expect(fragment.get("service_access_token")).toBeNull();
      expect(await t.backend.core.db.tenants.findByEmail(t.app.id, `${tamper}@example.com`)).toBeUndefined();
    },
  );

  it("trusts emails as the app says: an unverified claim does not take over an existing account, trustEmail never trusts any", async () => {
    const t = await oidcBackend();
    const owner = await signupTenant(t, { email: "owner@example.com" });
    await t.backend.core.db.tenants.markVerified(owner.id, t.clock());
    const unverified = await signIn(t, { sub: "idp-unverified", email: "owner@example.com", emailVerified: false });
    // Not vouched for: never linked to the verified account with that address.
    if (unverified.fragment.get("service_oauth") === "success") {
      expect((await me(t, unverified.fragment.get("service_access_token")!)).body.tenant.id).not.toBe(owner.id);
    } else {
      expect(unverified.fragment.get("error")).not.toBeNull();
    }
    const never = await oidcBackend({ trustEmail: "never" });
    const signed = await signIn(never, { sub: "idp-never", email: "fresh@example.com", emailVerified: true });
    expect(signed.fragment.get("service_oauth")).toBe("success");
    expect((await me(never, signed.fragment.get("service_access_token")!)).body.tenant.emailVerifiedAt).toBeNull();
    const always = await oidcBackend({ trustEmail: "always" });
    const trusted = await signIn(always, { sub: "idp-always", email: "claimless@example.com", emailVerified: false });
    expect((await me(always, trusted.fragment.get("service_access_token")!)).body.tenant.emailVerifiedAt).not.toBeNull();
  });

  it("refuses settings without an https issuer, and answers 404 while the issuer is not set", async () => {
    const t = await startBackend();
    await expect(t.backend.admin.updateApp(t.app.id, { settings: { oauth: { providers: { oidc: { clientId: "x", issuer: "http://idp.example.test" } } } } })).rejects.toThrow(/https/);
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { redirectUrls: [REDIRECT], providers: { oidc: { clientId: "x" } } } } });
    const started = await begin(t, "oidc");
    expectError(started.reply, 404, "not_found");
    expect(started.reply.body.message).toContain("issuer");
  });
});
