import { describe, expect, it } from "vitest";
import { OAUTH_PROVIDERS, type OAuthProviderName } from "../src/apps/settings.ts";
import { expectError, signupTenant, type TestBackend } from "./_helpers.ts";
import type { FakeAccount } from "./fake-oauth.ts";
import { useFakeOAuth, authorize, begin, callback, CLIENTS, fragmentOf, me, oauthBackend, REDIRECT, signInWith } from "./oauth-helpers.ts";

const fake = useFakeOAuth();

let seq = 0;
const account = (over: Partial<FakeAccount> = {}): FakeAccount => {
  const n = ++seq;
  return { id: `${1000 + n}`, email: `person${n}@example.com`, verified: true, ...over };
};

async function linkedProviders(t: TestBackend, accessToken: string) {
  return t.request("GET", "/api/v1/auth/providers", { bearer: { accessToken, appId: t.app.id } });
}

/** Facebook's Graph API does not say whether the email was confirmed: it is never trusted (docs/security.md). */
const VOUCHES = (p: OAuthProviderName) => p !== "facebook";

describe.each(OAUTH_PROVIDERS.filter(VOUCHES).map((p) => [p]))("social login with %s (vouches for emails)", (provider: OAuthProviderName) => {
  it("signs up a new, verified tenant whose fragment tokens work on me and on refresh", async () => {
    const t = await oauthBackend(fake);
    const who = account();
    const { fragment } = await signInWith(t, fake, provider, who);
    expect(fragment.get("service_oauth")).toBe("success");
    const accessToken = fragment.get("service_access_token")!;
    const res = await me(t, accessToken);
    expect(res.status).toBe(200);
    expect(res.body.tenant.email).toBe(who.email);
    expect(res.body.tenant.emailVerifiedAt).toBe(new Date(t.clock()).toISOString());
    const refreshed = await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: fragment.get("service_refresh_token") } });
    expect(refreshed.status).toBe(200);
    const links = await linkedProviders(t, accessToken);
    expect(links.body).toEqual({ providers: [{ provider, linkedAt: new Date(t.clock()).toISOString(), email: who.email }] });
    // No password was set: password login is refused the usual way.
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: who.email, password: "anything at all" } });
    expectError(login, 401, "invalid_credentials");
  });

  it("links to the existing tenant when the provider vouches for the same email", async () => {
    const t = await oauthBackend(fake);
    const existing = await signupTenant(t);
    const { fragment } = await signInWith(t, fake, provider, account({ email: existing.email.toUpperCase() }));
    const res = await me(t, fragment.get("service_access_token")!);
    expect(res.body.tenant.id).toBe(existing.id);
    const links = await linkedProviders(t, fragment.get("service_access_token")!);
    expect(links.body.providers.map((l: { provider: string }) => l.provider)).toEqual([provider]);
  });
});

describe("social login with facebook (never vouches)", () => {
  it("signs up a tenant on a placeholder address, never linked by the shared email", async () => {
    const t = await oauthBackend(fake);
    const existing = await signupTenant(t);
    const { fragment } = await signInWith(t, fake, "facebook", account({ id: "5150", email: existing.email }));
    const res = await me(t, fragment.get("service_access_token")!);
    expect(res.body.tenant).toMatchObject({ email: "facebook-5150@oauth.invalid", emailVerifiedAt: null });
    const links = await linkedProviders(t, fragment.get("service_access_token")!);
    expect(links.body.providers).toEqual([{ provider: "facebook", linkedAt: new Date(t.clock()).toISOString(), email: existing.email }]);
  });
});

describe.each(OAUTH_PROVIDERS.map((p) => [p]))("social login with %s", (provider: OAuthProviderName) => {
  it("signs a returning account in to the same tenant", async () => {
    const t = await oauthBackend(fake);
    const who = account();
    const first = await signInWith(t, fake, provider, who);
    const again = await signInWith(t, fake, provider, who);
    const a = await me(t, first.fragment.get("service_access_token")!);
    const b = await me(t, again.fragment.get("service_access_token")!);
    expect(b.body.tenant.id).toBe(a.body.tenant.id);
    expect(again.fragment.get("service_refresh_token")).not.toBe(first.fragment.get("service_refresh_token"));
  });

  it("never links to an existing tenant on an email the provider has not verified", async () => {
    const t = await oauthBackend(fake);
    const existing = await signupTenant(t);
    const { fragment } = await signInWith(t, fake, provider, account({ email: existing.email, verified: false }));
    // An unverified email is no match key: a separate tenant on a placeholder address.
    const res = await me(t, fragment.get("service_access_token")!);
    expect(res.body.tenant.id).not.toBe(existing.id);
    expect(res.body.tenant).toMatchObject({ email: expect.stringMatching(/@oauth\.invalid$/), emailVerifiedAt: null });
    // The existing account is untouched: its password still works.
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: existing.email, password: "correct horse battery" } });
    expect(login.status).toBe(200);
  });

  it("refuses a state whose browser cookie does not match, without burning it", async () => {
    const t = await oauthBackend(fake);
    const started = await begin(t, provider);
    const back = await authorize(fake, provider, started.location, account());
    const [name] = started.cookie.split("=");
    const foreign = fragmentOf(await callback(t, back, `${name}=someone-elses-cookie`));
    expect(Object.fromEntries(foreign)).toEqual({ service_oauth: "error", error: "invalid_state" });
    const noCookie = fragmentOf(await callback(t, back, undefined));
    expect(noCookie.get("error")).toBe("invalid_state");
    const own = fragmentOf(await callback(t, back, started.cookie));
    expect(own.get("service_oauth")).toBe("success");
  });

  it("refuses a replayed state", async () => {
    const t = await oauthBackend(fake);
    const started = await begin(t, provider);
    const back = await authorize(fake, provider, started.location, account());
    expect(fragmentOf(await callback(t, back, started.cookie)).get("service_oauth")).toBe("success");
    const replay = fragmentOf(await callback(t, back, started.cookie));
    expect(Object.fromEntries(replay)).toEqual({ service_oauth: "error", error: "invalid_state" });
  });

  it("refuses a state older than 10 minutes", async () => {
    const t = await oauthBackend(fake);
    const started = await begin(t, provider);
    const back = await authorize(fake, provider, started.location, account());
    t.clock.advance(11 * 60 * 1000);
    const late = fragmentOf(await callback(t, back, started.cookie));
    expect(Object.fromEntries(late)).toEqual({ service_oauth: "error", error: "state_expired" });
  });

  it("returns the provider's access_denied to the app", async () => {
    const t = await oauthBackend(fake);
    const { fragment } = await signInWith(t, fake, provider, { error: provider === "apple" ? "user_cancelled_authorize" : "access_denied" });
    expect(Object.fromEntries(fragment)).toEqual({ service_oauth: "error", error: "access_denied" });
  });

  it("honours signup mode closed: known accounts sign in, new ones are refused", async () => {
    const t = await oauthBackend(fake);
    const known = account();
    await signInWith(t, fake, provider, known);
    await t.backend.admin.updateApp(t.app.id, { settings: { signupMode: "closed" } });
    expect((await signInWith(t, fake, provider, known)).fragment.get("service_oauth")).toBe("success");
    const { fragment } = await signInWith(t, fake, provider, account());
    expect(Object.fromEntries(fragment)).toEqual({ service_oauth: "error", error: "signup_disabled" });
  });

  it("invite-only: a new account needs a valid inviteToken, which it uses up", async () => {
    const t = await oauthBackend(fake);
    const inviter = await signupTenant(t);
    const created = await t.request("POST", "/api/v1/tenants/me/invite-tokens", { bearer: inviter.bearer, body: {} });
    expect(created.status, created.text).toBe(201);
    const inviteToken: string = created.body.token.token;
    await t.backend.admin.updateApp(t.app.id, { settings: { signupMode: "invite_only" } });
    const without = await signInWith(t, fake, provider, account());
    expect(Object.fromEntries(without.fragment)).toEqual({ service_oauth: "error", error: "invite_required" });
    const madeUp = await signInWith(t, fake, provider, account(), { inviteToken: "inv_example" });
    expect(Object.fromEntries(madeUp.fragment)).toEqual({ service_oauth: "error", error: "invalid_token" });
    const seen: (string | undefined)[] = [];
    t.backend.core.hooks.on("tenant.created", (e) => void seen.push(e.inviteToken));
    const withToken = await signInWith(t, fake, provider, account(), { inviteToken });
    expect(withToken.fragment.get("service_oauth")).toBe("success");
    expect(seen).toEqual([inviteToken]);
    const again = await signInWith(t, fake, provider, account(), { inviteToken });
    expect(Object.fromEntries(again.fragment)).toEqual({ service_oauth: "error", error: "invalid_token" });
  });
});
