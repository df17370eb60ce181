import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { expectSessionEnded, PASSWORD, refresh } from "./_auth.ts";

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
const signWith = (t: TestBackend, header: unknown, claims: unknown) => {
  const body = `${b64(header)}.${b64(claims)}`;
  return `${body}.${createHmac("sha256", t.backend.core.secrets.deriveKey("access-token")).update(body).digest("base64url")}`;
};
const me = (t: TestBackend, bearer: { accessToken: string; appId: string }) => t.request("GET", "/api/v1/auth/me", { bearer });

describe("signup", () => {
  it("creates the tenant and answers 201 with the spec's shape, lifetimes in seconds and a token naming tenant, app and session", async () => {
    const t = await startBackend();
    const res = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "  New.User@Example.COM ", password: PASSWORD } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      tenant: { id: expect.stringMatching(/^tnt_/), email: "new.user@example.com", emailVerifiedAt: null, createdAt: new Date(t.clock()).toISOString() },
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^rt_/),
      expiresIn: 900,
      refreshExpiresIn: 7776000,
    });
    const claims = claimsOf(res.body.accessToken);
    expect(claims).toEqual({ iss: "tenantd", sub: res.body.tenant.id, app: t.app.id, sid: expect.stringMatching(/^ses_/), pid: null, iat: t.clock() / 1000, exp: t.clock() / 1000 + 900 });
    expect((await me(t, { accessToken: res.body.accessToken, appId: t.app.id })).body.tenant).toEqual(res.body.tenant);
  });

  it.each([
    { name: "missing email", body: { password: PASSWORD }, status: 400, code: "invalid_request" },
    { name: "not an email", body: { email: "nope", password: PASSWORD }, status: 400, code: "invalid_request" },
    { name: "7-character password", body: { email: "a@example.com", password: "x".repeat(7) }, status: 400, code: "invalid_request" },
    { name: "257-character password", body: { email: "a@example.com", password: "x".repeat(257) }, status: 400, code: "invalid_request" },
    { name: "sendEmail not a boolean", body: { email: "a@example.com", password: PASSWORD, sendEmail: "no" }, status: 400, code: "invalid_request" },
  ])("refuses $name", async ({ body, status, code }) => {
    const t = await startBackend();
    expectError(await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body }), status, code);
  });

  it("accepts passwords of 8 and 256 characters with no composition rules", async () => {
    const t = await startBackend();
    for (const password of ["zq8wx7kv", "é".repeat(256)]) {
      const email = `p${password.length}@example.com`;
      await signupTenant(t, { email, password });
      expect((await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email, password } })).status).toBe(200);
    }
  });

  it("refuses a second account for the same email, compared trimmed and lower-cased", async () => {
    const t = await startBackend();
    await signupTenant(t, { email: "dup@example.com" });
    expectError(await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: " DUP@example.com", password: PASSWORD } }), 409, "email_exists");
  });

  it("answers 403 signup_disabled when the app's signup mode is closed", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { signupMode: "closed" } });
    expectError(await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "a@example.com", password: PASSWORD } }), 403, "signup_disabled");
  });
});

describe("login", () => {
  it("starts a new session with a fresh token pair", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "in@example.com" });
    const res = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "IN@example.com", password: PASSWORD } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ tenant: { id: tenant.id, email: "in@example.com" }, expiresIn: 900, refreshExpiresIn: 7776000 });
    expect(claimsOf(res.body.accessToken).sid).not.toBe(claimsOf(tenant.accessToken).sid);
    expect((await me(t, { accessToken: res.body.accessToken, appId: t.app.id })).status).toBe(200);
  });

  it("gives an unknown email and a wrong password the same status, code and message", async () => {
    const t = await startBackend();
    await signupTenant(t, { email: "known@example.com" });
    const other = await t.backend.admin.createApp({ name: "other" });
    const key = t.app.publishableKey;
    const replies = [
      await t.request("POST", "/api/v1/auth/login", { key, body: { email: "known@example.com", password: "wrong password" } }),
      await t.request("POST", "/api/v1/auth/login", { key, body: { email: "nobody@example.com", password: "wrong password" } }),
      // the tenant exists, but in another app
      await t.request("POST", "/api/v1/auth/login", { key: other.publishableKey, body: { email: "known@example.com", password: PASSWORD } }),
    ];
    for (const r of replies) expectError(r, 401, "invalid_credentials");
    expect(new Set(replies.map((r) => r.text)).size).toBe(1);
  });

  it("requires a known app key", async () => {
    const t = await startBackend();
    const body = { email: "a@example.com", password: PASSWORD };
    expectError(await t.request("POST", "/api/v1/auth/login", { body }), 401, "unauthorized");
    expectError(await t.request("POST", "/api/v1/auth/login", { body, key: "pk_wrong" }), 401, "unauthorized");
  });
});

describe("tenant bearer", () => {
  async function setup() {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const other = await t.backend.admin.createApp({ name: "other" });
    return { t, tenant, other };
  }
  const cases: { name: string; code: string; make: (s: Awaited<ReturnType<typeof setup>>) => { accessToken: string; appId: string } | Record<string, string> }[] = [
    { name: "no authorization header", code: "unauthorized", make: ({ t }) => ({ "x-service-app": t.app.id }) },
    { name: "no x-service-app header", code: "unauthorized", make: ({ tenant }) => ({ authorization: `Bearer ${tenant.accessToken}` }) },
    { name: "an unknown app id", code: "unauthorized", make: ({ tenant }) => ({ accessToken: tenant.accessToken, appId: "app_unknown" }) },
    { name: "another app's id", code: "invalid_access_token", make: ({ tenant, other }) => ({ accessToken: tenant.accessToken, appId: other.id }) },
    { name: "a token that is not a JWT", code: "invalid_access_token", make: ({ t }) => ({ accessToken: "not-a-token", appId: t.app.id }) },
    {
      name: "a tampered payload (another tenant id)",
      code: "invalid_access_token",
      make: ({ t, tenant }) => {
        const [h, , s] = tenant.accessToken.split(".");
        return { accessToken: `${h}.${b64({ ...claimsOf(tenant.accessToken), sub: "tnt_someoneelse" })}.${s}`, appId: t.app.id };
      },
    },
    {
      name: "a tampered signature",
      code: "invalid_access_token",
      make: ({ t, tenant }) => ({ accessToken: tenant.accessToken.slice(0, -4) + (tenant.accessToken.endsWith("AAAA") ? "BBBB" : "AAAA"), appId: t.app.id }),
    },
    {
      name: 'alg "none" with no signature',
      code: "invalid_access_token",
      make: ({ t, tenant }) => ({ accessToken: `${b64({ alg: "none", typ: "JWT" })}.${tenant.accessToken.split(".")[1]}.`, appId: t.app.id }),
    },
    {
      name: "another header (HS512), signed with the real key",
      code: "invalid_access_token",
      make: ({ t, tenant }) => ({ accessToken: signWith(t, { alg: "HS512", typ: "JWT" }, claimsOf(tenant.accessToken)), appId: t.app.id }),
    },
    {
      name: "the same header with its keys reordered, signed with the real key",
      code: "invalid_access_token",
      make: ({ t, tenant }) => ({ accessToken: signWith(t, { typ: "JWT", alg: "HS256" }, claimsOf(tenant.accessToken)), appId: t.app.id }),
    },
  ];

  it.each(cases)("refuses $name with 401 $code", async ({ make, code }) => {
    const s = await setup();
    const made = make(s);
    const opts = "accessToken" in made && "appId" in made ? { bearer: made as { accessToken: string; appId: string } } : { headers: made as Record<string, string> };
    expectError(await s.t.request("GET", "/api/v1/auth/me", opts), 401, code);
    // The untouched token still works: the refusal was about the change.
    expect((await me(s.t, s.tenant.bearer)).status).toBe(200);
  });

  it("refuses an expired access token with token_expired, and the refreshed one works", async () => {
    const { t, tenant } = await setup();
    t.clock.advance(15 * 60 * 1000 - 1000);
    expect((await me(t, tenant.bearer)).status).toBe(200);
    t.clock.advance(1000);
    expectError(await me(t, tenant.bearer), 401, "token_expired");
    const next = await refresh(t, tenant.refreshToken);
    expect((await me(t, { accessToken: next.body.accessToken, appId: t.app.id })).status).toBe(200);
  });
});

describe("refresh", () => {
  it("rotates the refresh token, keeps the session and slides its 90-day window", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    let token = tenant.refreshToken;
    for (let i = 0; i < 3; i++) {
      t.clock.advance(89 * 24 * 3600 * 1000);
      const res = await refresh(t, token);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ accessToken: expect.any(String), refreshToken: expect.stringMatching(/^rt_/), expiresIn: 900, refreshExpiresIn: 7776000 });
      expect(res.body.refreshToken).not.toBe(token);
      expect(claimsOf(res.body.accessToken).sid).toBe(claimsOf(tenant.accessToken).sid);
      token = res.body.refreshToken;
    }
    t.clock.advance(90 * 24 * 3600 * 1000 + 1);
    expectError(await refresh(t, token), 401, "session_ended");
  });

  it("lets concurrent refreshes of one token through within the grace window", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const [a, b] = await Promise.all([refresh(t, tenant.refreshToken), refresh(t, tenant.refreshToken)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    t.clock.advance(4_000);
    expect((await refresh(t, tenant.refreshToken)).status).toBe(200);
  });

  it("revokes the whole session when a rotated token is reused after the grace window", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const rotated = await refresh(t, tenant.refreshToken);
    t.clock.advance(21_000);
    expectError(await refresh(t, tenant.refreshToken), 401, "session_ended");
    // The thief's reuse also ends the legitimate holder's newest tokens.
    expectError(await refresh(t, rotated.body.refreshToken), 401, "session_ended");
    expectError(await me(t, { accessToken: rotated.body.accessToken, appId: t.app.id }), 401, "session_ended");
    // Another session of the same tenant is untouched.
    const again = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password: PASSWORD } });
    expect((await me(t, { accessToken: again.body.accessToken, appId: t.app.id })).status).toBe(200);
  });

  it("refuses an unknown token, a token under another app's key, and a bad body", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const other = await t.backend.admin.createApp({ name: "other" });
    expectError(await refresh(t, "rt_unknown"), 401, "invalid_credentials");
    expectError(await refresh(t, tenant.refreshToken, other.publishableKey), 401, "invalid_credentials");
    expectError(await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: {} }), 400, "invalid_request");
    expectError(await refresh(t, tenant.refreshToken, "pk_wrong"), 401, "unauthorized");
  });
});

describe("logout", () => {
  it("answers 204, then every bearer endpoint refuses the old access token and the refresh token is dead", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const res = await t.request("POST", "/api/v1/auth/logout", { bearer: tenant.bearer, body: { refreshToken: tenant.refreshToken } });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    await expectSessionEnded(t, tenant);
  });

  it("needs a bearer", async () => {
    const t = await startBackend();
    expectError(await t.request("POST", "/api/v1/auth/logout", { body: {} }), 401, "unauthorized");
  });
});

describe("introspect", () => {
  const inactive = { active: false, tenantId: null, appId: null, exp: null, parentTenantId: null };
  const introspect = (t: TestBackend, opts: { bearer?: { accessToken: string; appId: string }; body?: unknown; key?: string } = {}) =>
    t.request("POST", "/api/v1/auth/introspect", { key: opts.key ?? t.app.publishableKey, bearer: opts.bearer, body: opts.body ?? {} });

  it("describes a live bearer, with the tenant and subscription when asked", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "who@example.com" });
    const exp = new Date(t.clock() + 900_000).toISOString();
    expect((await introspect(t, { bearer: tenant.bearer })).body).toEqual({ active: true, tenantId: tenant.id, appId: t.app.id, exp, parentTenantId: null });
    const full = await introspect(t, { bearer: tenant.bearer, body: { include: ["subscription", "tenant"] } });
    expect(full.body).toEqual({
      active: true,
      tenantId: tenant.id,
      appId: t.app.id,
      exp,
      parentTenantId: null,
      subscription: null,
      tenant: { id: tenant.id, email: "who@example.com", emailVerifiedAt: null, createdAt: new Date(t.clock()).toISOString() },
    });
  });

  it("answers 200 active:false for a missing, invalid, other app's, expired or ended bearer", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const other = await t.backend.admin.createApp({ name: "other" });
    const inOther = await signupTenant(t, { key: other.publishableKey, appId: other.id });
    expect((await introspect(t)).body).toEqual(inactive);
    expect((await introspect(t, { body: { include: ["tenant", "subscription"] } })).body).toEqual({ ...inactive, tenant: null, subscription: null });
    expect((await introspect(t, { bearer: { accessToken: "garbage", appId: t.app.id } })).body).toEqual(inactive);
    // another app's token, under its own app id but this app's key
    expect((await introspect(t, { bearer: inOther.bearer })).body).toEqual(inactive);
    t.clock.advance(900_000);
    expect((await introspect(t, { bearer: tenant.bearer })).status).toBe(200);
    expect((await introspect(t, { bearer: tenant.bearer })).body).toEqual(inactive);
  });

  it("requires the app key and a valid include list", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    expectError(await t.request("POST", "/api/v1/auth/introspect", { bearer: tenant.bearer, body: {} }), 401, "unauthorized");
    expectError(await introspect(t, { key: "pk_wrong", bearer: tenant.bearer }), 401, "unauthorized");
    expectError(await introspect(t, { bearer: tenant.bearer, body: { include: ["password"] } }), 400, "invalid_request");
  });
});

describe("developer login", () => {
  it("is rate limited like the tenant logins", async () => {
    const t = await startBackend({ rateLimit: { perIp: 2, perEmail: 100, windowSeconds: 60 } });
    await developerSession(t, "dev@example.com", "developer password");
    expect((await t.request("POST", "/api/v1/developer/login", { body: { email: "dev@example.com", password: "developer password" } })).status).toBe(200);
    const res = await t.request("POST", "/api/v1/developer/login", { body: { email: "dev@example.com", password: "developer password" } });
    expectError(res, 429, "rate_limited");
    expect(res.headers.get("retry-after")).toBe("60");
  });
});


describe("review fixes", () => {
  it("introspect needs only the key beside the bearer: no x-service-app", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const res = await t.request("POST", "/api/v1/auth/introspect", {
      key: t.app.publishableKey,
      headers: { authorization: `Bearer ${tenant.accessToken}` },
      body: {},
    });
    expect(res.body).toMatchObject({ active: true, tenantId: tenant.id, appId: t.app.id });
  });

  it("a refresh token presented with another app's key is refused and left usable for its own app", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const other = await t.backend.admin.createApp({ name: "other" });
    expectError(await t.request("POST", "/api/v1/auth/refresh", { key: other.publishableKey, body: { refreshToken: tenant.refreshToken } }), 401, "invalid_credentials");
    t.clock.advance(60_000);
    const own = await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: tenant.refreshToken } });
    expect(own.status).toBe(200);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: own.body.accessToken, appId: t.app.id } })).status).toBe(200);
  });
});
