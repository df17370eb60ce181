import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { useFakeOAuth, authorize, begin, callback, CLIENTS, fragmentOf, me, oauthBackend, REDIRECT, signInWith } from "./oauth-helpers.ts";
import { listProviders, setProvider, setRedirectUrls } from "../src/oauth/admin.ts";
import { storeRows } from "./_store.ts";

const fake = useFakeOAuth();

let seq = 0;
const person = (verified = true) => {
  const n = ++seq;
  return { id: `${5000 + n}`, email: `edge${n}@example.com`, verified };
};

describe("the redirect allow-list", () => {
  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["not on the list", "https://evil.example.com/auth/done"],
    ["same origin, other path", "https://app.example.com/other"],
    ["carrying a fragment", `${REDIRECT}#x=1`],
    ["with credentials", "https://user:pw@app.example.com/auth/done"],
    ["not http", "javascript:alert(1)"],
  ])("refuses a redirect %s with a 400 JSON body and no Location", async (_name, redirect) => {
    const t = await oauthBackend(fake);
    const { reply } = await begin(t, "google", { redirect });
    expectError(reply, 400, "invalid_redirect");
    expect(reply.headers.get("location")).toBeNull();
    expect(reply.headers.get("set-cookie")).toBeNull();
  });

  it("accepts URLs below an allow-list entry ending in / on the same origin only", async () => {
    const t = await oauthBackend(fake);
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { redirectUrls: ["https://app.example.com/cb/"] } } });
    expect((await begin(t, "google", { redirect: "https://app.example.com/cb/deep?x=1" })).reply.status).toBe(302);
    expectError((await begin(t, "google", { redirect: "https://app.example.com/cbx" })).reply, 400, "invalid_redirect");
    expectError((await begin(t, "google", { redirect: "https://app.example.com.evil.io/cb/" })).reply, 400, "invalid_redirect");
    expectError((await begin(t, "google", { redirect: "http://app.example.com/cb/" })).reply, 400, "invalid_redirect");
  });

  it("does not follow a redirect taken off the list while the person was at the provider", async () => {
    const t = await oauthBackend(fake);
    const started = await begin(t, "github");
    const back = await authorize(fake, "github", started.location, person());
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { redirectUrls: ["https://elsewhere.example.com/"] } } });
    const reply = await callback(t, back, started.cookie);
    expectError(reply, 400, "invalid_redirect");
    expect(reply.headers.get("location")).toBeNull();
  });
});

describe("starting a sign-in", () => {
  it("answers 404 for an unknown provider, an unknown app, and a provider not set up or disabled", async () => {
    const t = await oauthBackend(fake);
    expectError((await begin(t, "myspace")).reply, 404, "not_found");
    expectError((await begin(t, "google", { appId: "app_nope" })).reply, 404, "not_found");
    expectError((await begin(t, "google", { appId: "" })).reply, 400, "invalid_request");
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { providers: { google: { enabled: false }, github: null } } } });
    expectError((await begin(t, "google")).reply, 404, "not_found");
    expectError((await begin(t, "github")).reply, 404, "not_found");
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { providers: { discord: { clientSecret: null } } } } });
    const incomplete = (await begin(t, "discord")).reply;
    expectError(incomplete, 404, "not_found");
    expect(incomplete.body.message).toContain("clientSecret");
  });

  it("asks for the email scope, uses PKCE where the provider supports it, and registers the callback URL", async () => {
    const t = await oauthBackend(fake);
    const expected = {
      google: { host: "accounts.google.com", scope: "openid email", pkce: true },
      github: { host: "github.com", scope: "read:user user:email", pkce: false },
      apple: { host: "appleid.apple.com", scope: "name email", pkce: false },
      microsoft: { host: "login.microsoftonline.com", scope: "openid profile email", pkce: true },
      facebook: { host: "www.facebook.com", scope: "email public_profile", pkce: false },
      discord: { host: "discord.com", scope: "identify email", pkce: true },
      twitter: { host: "twitter.com", scope: "users.read tweet.read users.email", pkce: true },
    };
    for (const [provider, want] of Object.entries(expected)) {
      const url = new URL((await begin(t, provider)).location);
      expect({ provider, host: url.host, scope: url.searchParams.get("scope"), pkce: url.searchParams.get("code_challenge_method") === "S256" }).toEqual({ provider, ...want, pkce: want.pkce });
      expect(url.searchParams.get("redirect_uri")).toBe(`http://localhost:3000/api/v1/auth/oauth/${provider}/callback`);
      expect(url.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{20,}$/);
    }
    expect(new URL((await begin(t, "apple")).location).searchParams.get("response_mode")).toBe("form_post");
    expect(new URL((await begin(t, "microsoft")).location).pathname).toBe("/contoso-tenant-id/oauth2/v2.0/authorize");
  });

  it("stores the state hashed and the PKCE verifier sealed", async () => {
    const t = await oauthBackend(fake);
    const state = new URL((await begin(t, "google")).location).searchParams.get("state")!;
    const rows = await storeRows(t.backend).all<Record<string, string>>("SELECT state_hash, code_verifier, browser_hash FROM oauth_states");
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(state);
    // Sealed and bound to the app (AES-GCM associated data).
    expect(rows[0]!.code_verifier!.startsWith("enc:v2:")).toBe(true);
  });

  it("binds the state with an httpOnly SameSite=Lax cookie, Secure on https, SameSite=None for Apple's form post", async () => {
    const local = await oauthBackend(fake);
    const plain = (await begin(local, "google")).setCookie;
    expect(plain).toMatch(/^tenantd_oauth_google=[A-Za-z0-9_-]+; Path=\/api\/v1\/auth\/oauth\/google; Max-Age=600; HttpOnly; SameSite=Lax$/);
    const secure = await oauthBackend(fake, { config: { publicUrl: "https://id.example.com" } });
    expect((await begin(secure, "google")).setCookie).toContain("; SameSite=Lax; Secure");
    expect((await begin(local, "apple")).setCookie).toContain("; HttpOnly; SameSite=None; Secure");
    const { reply } = await signInWith(secure, fake, "google", person());
    expect(reply.headers.get("set-cookie")).toContain("tenantd_oauth_google=; Path=/api/v1/auth/oauth/google; Max-Age=0");
    expect(reply.headers.get("cache-control")).toBe("no-store");
  });
});

describe("the callback", () => {
  it("answers 400 JSON for a missing or unknown state: there is no trusted redirect yet", async () => {
    const t = await oauthBackend(fake);
    expectError(await t.request("GET", "/api/v1/auth/oauth/google/callback?code=abc"), 400, "invalid_state");
    const forged = await t.request("GET", "/api/v1/auth/oauth/google/callback?code=abc&state=forged");
    expectError(forged, 400, "invalid_state");
    expect(forged.headers.get("location")).toBeNull();
  });

  it("refuses a state started for another provider", async () => {
    const t = await oauthBackend(fake);
    const started = await begin(t, "google");
    const back = await authorize(fake, "google", started.location, person());
    const reply = await callback(t, { ...back, path: back.path.replace("/google/", "/discord/") }, started.cookie.replace("google", "discord"));
    expect(fragmentOf(reply).get("error")).toBe("invalid_state");
  });

  it("accepts a form post only for Apple, and only as a form", async () => {
    const t = await oauthBackend(fake);
    expectError(await t.request("POST", "/api/v1/auth/oauth/google/callback", { raw: "state=x", headers: { "content-type": "application/x-www-form-urlencoded" } }), 405, "method_not_allowed");
    expectError(await t.request("POST", "/api/v1/auth/oauth/apple/callback", { body: { state: "x" } }), 415, "unsupported_media_type");
  });

  it("turns a failed code exchange into provider_error in the fragment", async () => {
    const t = await oauthBackend(fake);
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { providers: { github: { clientSecret: "rotated-at-github" } } } } });
    const { fragment } = await signInWith(t, fake, "github", person());
    expect(Object.fromEntries(fragment)).toEqual({ service_oauth: "error", error: "provider_error" });
  });

  it("maps an unknown provider error to provider_error", async () => {
    const t = await oauthBackend(fake);
    const { fragment } = await signInWith(t, fake, "discord", { error: "temporarily_unavailable" });
    expect(Object.fromEntries(fragment)).toEqual({ service_oauth: "error", error: "provider_error" });
  });
});

describe("linking rules", () => {
  it("a verified link claims an unverified password account: password dropped, old sessions ended", async () => {
    const t = await oauthBackend(fake);
    const squatter = await signupTenant(t);
    const { fragment } = await signInWith(t, fake, "google", { id: "g-owner", email: squatter.email, verified: true });
    const owner = await me(t, fragment.get("service_access_token")!);
    expect(owner.body.tenant.id).toBe(squatter.id);
    expect(owner.body.tenant.emailVerifiedAt).not.toBeNull();
    expectError(await me(t, squatter.accessToken), 401, "session_ended");
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: squatter.email, password: "correct horse battery" } });
    expectError(login, 401, "invalid_credentials");
  });

  it("an already verified account keeps its password and sessions when a provider is linked", async () => {
    const t = await oauthBackend(fake);
    const tenant = await signupTenant(t);
    await t.backend.core.db.tenants.markVerified(tenant.id, t.clock());
    await signInWith(t, fake, "discord", { id: "d-1", email: tenant.email, verified: true });
    expect((await me(t, tenant.accessToken)).status).toBe(200);
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password: "correct horse battery" } });
    expect(login.status).toBe(200);
  });

  it("one tenant can link several providers; each shows with its email", async () => {
    const t = await oauthBackend(fake);
    const email = "many@example.com";
    await signInWith(t, fake, "github", { id: "77", email });
    t.clock.advance(1000);
    const { fragment } = await signInWith(t, fake, "apple", { id: "001.abc.002", email });
    const res = await t.request("GET", "/api/v1/auth/providers", { bearer: { accessToken: fragment.get("service_access_token")!, appId: t.app.id } });
    expect(res.body.providers.map((p: { provider: string; email: string }) => [p.provider, p.email])).toEqual([["github", email], ["apple", email]]);
  });

  it("an account without a shared email gets a tenant with a placeholder address, never linked by email", async () => {
    const t = await oauthBackend(fake);
    const { fragment } = await signInWith(t, fake, "twitter", { id: "4242", email: null });
    const res = await me(t, fragment.get("service_access_token")!);
    expect(res.body.tenant).toMatchObject({ email: "twitter-4242@oauth.invalid", emailVerifiedAt: null });
  });

  it("the same provider account in another app is another tenant", async () => {
    const t = await oauthBackend(fake);
    const who = { id: "shared-1", email: "shared@example.com" };
    const first = await me(t, (await signInWith(t, fake, "google", who)).fragment.get("service_access_token")!);
    const other = await t.backend.admin.createApp({ name: "second", settings: { oauth: { redirectUrls: [REDIRECT], providers: { google: CLIENTS.google } } } });
    const started = await begin(t, "google", { appId: other.id });
    const back = await authorize(fake, "google", started.location, who);
    const token = fragmentOf(await callback(t, back, started.cookie)).get("service_access_token")!;
    const second = await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: token, appId: other.id } });
    expect(second.body.tenant.email).toBe("shared@example.com");
    expect(second.body.tenant.id).not.toBe(first.body.tenant.id);
  });

  it("parallel first sign-ins of one account end in one tenant", async () => {
    const t = await oauthBackend(fake);
    const who = { id: "race-1", email: "race@example.com" };
    const flows = [];
    for (let i = 0; i < 2; i++) {
      const started = await begin(t, "discord");
      flows.push({ started, back: await authorize(fake, "discord", started.location, who) });
    }
    const replies = await Promise.all(flows.map((f) => callback(t, f.back, f.started.cookie)));
    const ids = await Promise.all(replies.map(async (r) => (await me(t, fragmentOf(r).get("service_access_token")!)).body.tenant.id));
    expect(new Set(ids).size).toBe(1);
    expect(await storeRows(t.backend).value("SELECT COUNT(*) FROM tenants WHERE email = ?", "race@example.com")).toBe(1);
  });

  it("a password account squatting a placeholder address blocks the sign-up cleanly, never links", async () => {
    const t = await oauthBackend(fake);
    const squatter = await signupTenant(t, { email: "twitter-777@oauth.invalid" });
    const { fragment } = await signInWith(t, fake, "twitter", { id: "777", email: null });
    expect(Object.fromEntries(fragment)).toEqual({ service_oauth: "error", error: "email_exists" });
    expect(await storeRows(t.backend).value("SELECT COUNT(*) FROM oauth_accounts WHERE tenant_id = ?", squatter.id)).toBe(0);
  });

  it("Apple: an email only in the unsigned first-time user field is neither linked nor used as the address", async () => {
    const t = await oauthBackend(fake);
    const existing = await signupTenant(t);
    const linked = await signInWith(t, fake, "apple", { id: "001.aa.01", email: existing.email, emailOnlyInUserField: true });
    expect(linked.back.form?.user).toContain(existing.email);
    expect((await me(t, linked.fragment.get("service_access_token")!)).body.tenant).toMatchObject({ email: "apple-001.aa.01@oauth.invalid", emailVerifiedAt: null });
    const fresh = await signInWith(t, fake, "apple", { id: "001.bb.02", email: "fresh@example.com", emailOnlyInUserField: true });
    expect((await me(t, fresh.fragment.get("service_access_token")!)).body.tenant).toMatchObject({ email: "apple-001.bb.02@oauth.invalid", emailVerifiedAt: null });
  });

  it("scopes set in the settings replace the defaults (X without email access)", async () => {
    const t = await oauthBackend(fake);
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { providers: { twitter: { scopes: ["users.read", "tweet.read"] } } } } });
    const { fragment, started } = await signInWith(t, fake, "twitter", { id: "888", email: "x@example.com" });
    expect(new URL(started.location).searchParams.get("scope")).toBe("users.read tweet.read");
    expect((await me(t, fragment.get("service_access_token")!)).body.tenant.email).toBe("twitter-888@oauth.invalid");
  });

  it("the providers endpoint needs the tenant bearer", async () => {
    const t = await oauthBackend(fake);
    expectError(await t.request("GET", "/api/v1/auth/providers"), 401, "unauthorized");
  });

  it("deleting a tenant removes its links", async () => {
    const t = await oauthBackend(fake);
    const { fragment } = await signInWith(t, fake, "facebook", person());
    const id = (await me(t, fragment.get("service_access_token")!)).body.tenant.id;
    await t.backend.core.db.tenants.remove(t.app.id, id);
    expect(await storeRows(t.backend).value("SELECT COUNT(*) FROM oauth_accounts")).toBe(0);
  });
});

describe("provider settings administration (what the CLI calls)", () => {
  it("sets a provider with its secret sealed at rest and redacted on read, and lists callback URLs", async () => {
    const t = await oauthBackend(fake);
    const core = t.backend.core;
    await setProvider(core, t.app.id, "microsoft", { clientId: "new-ms", clientSecret: "ms-shh", tenant: "organizations" });
    const stored = await storeRows(core).value<string>("SELECT settings FROM apps WHERE id = ?", t.app.id);
    expect(stored).not.toContain("ms-shh");
    const shown = await t.backend.admin.getApp(t.app.id);
    expect(JSON.stringify(shown.settings)).not.toContain("ms-shh");
    const { providers, redirectUrls } = await listProviders(core, t.app.id);
    expect(redirectUrls).toEqual([REDIRECT]);
    expect(providers.find((p) => p.provider === "microsoft")).toMatchObject({
      enabled: true,
      configured: true,
      clientId: "new-ms",
      clientSecretSet: true,
      tenant: "organizations",
      callbackUrl: "http://localhost:3000/api/v1/auth/oauth/microsoft/callback",
    });
    expect(new URL((await begin(t, "microsoft")).location).pathname).toBe("/organizations/oauth2/v2.0/authorize");
    await setProvider(core, t.app.id, "microsoft", { enabled: false });
    expectError((await begin(t, "microsoft")).reply, 404, "not_found");
  });

  it("refuses a new provider without a client id and an unknown field value", async () => {
    const t = await oauthBackend(fake);
    await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { providers: { github: null } } } });
    await expect(setProvider(t.backend.core, t.app.id, "github", { clientSecret: "x" })).rejects.toThrow(/client id/);
    await expect(setRedirectUrls(t.backend.core, t.app.id, { add: ["not a url"] })).rejects.toThrow(/redirectUrls/);
  });

  it("adds and removes redirect URLs", async () => {
    const t = await oauthBackend(fake);
    expect(await setRedirectUrls(t.backend.core, t.app.id, { add: ["https://b.example.com/x"] })).toEqual([REDIRECT, "https://b.example.com/x"]);
    expect(await setRedirectUrls(t.backend.core, t.app.id, { remove: [REDIRECT] })).toEqual(["https://b.example.com/x"]);
  });
});
