// Issue 39, the sign-in items: the backoff no caller can skip (1), a backoff no stranger can
// turn into a lockout (6), one password rule for every reset (8), and the dashboard's
// informational findings (the data-directory path, the forwarder's anchor).
import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { PASSWORD } from "./_auth.ts";
import { tokenFromOutbox } from "./_email.ts";

const ORIGIN = "http://localhost";
const LIMITS = { rateLimit: { windowSeconds: 60, perIp: 10_000, perEmail: 10_000 }, trustProxy: true } as const;

const tenantLogin = (t: TestBackend, email: string, password: string, ip: string) =>
  t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email, password }, headers: { "x-forwarded-for": ip } });
const developerApiLogin = (t: TestBackend, email: string, password: string, ip = "192.0.2.1") =>
  t.request("POST", "/api/v1/developer/login", { body: { email, password }, headers: { "x-forwarded-for": ip } });
const dashboardLogin = (t: TestBackend, email: string, password: string, ip = "192.0.2.1") =>
  t.request("POST", "/_/session", { body: { email, password }, headers: { origin: ORIGIN, "x-forwarded-for": ip } });

/** One wrong guess from each of `n` addresses no one signed in from: refused, then (past the account's 20) waiting. */
async function guessFromMany(t: TestBackend, email: string, n: number, net = 10) {
  for (let i = 0; i < n; i++) expect([401, 429]).toContain((await tenantLogin(t, email, "not the password", `198.51.${net}.${i}`)).status);
}

async function resetToken(t: TestBackend, email: string): Promise<string> {
  expect((await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body: { email } })).status).toBe(204);
  return tokenFromOutbox(t, email, "reset");
}

const form = (t: TestBackend, path: string, fields: Record<string, string>) =>
  t.request("POST", path, { raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });

describe("the sign-in backoff lives in the login functions (issue 39 item 1)", () => {
  it("dashboard sign-in waits like the admin API, and their failures count together", async () => {
    const t = await startBackend(LIMITS);
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    for (let i = 0; i < 3; i++) expectError(await developerApiLogin(t, "dev@example.com", "wrong password"), 401, "invalid_credentials");
    for (let i = 0; i < 2; i++) expectError(await dashboardLogin(t, "dev@example.com", "wrong password"), 401, "invalid_credentials");
    // Five failures between the two doors: both make the right password wait.
    const dashboard = await dashboardLogin(t, "dev@example.com", "developer password");
    expectError(dashboard, 429, "rate_limited");
    expect(dashboard.headers.get("retry-after")).toBe("1");
    expectError(await developerApiLogin(t, "dev@example.com", "developer password"), 429, "rate_limited");
    t.clock.advance(1000);
    expect((await dashboardLogin(t, "dev@example.com", "developer password")).status).toBe(200);
  });

  it("guesses through the dashboard alone are slowed down as the API's are", async () => {
    const t = await startBackend(LIMITS);
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await dashboardLogin(t, "dev@example.com", `guess number ${i}`)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429, 429, 429]);
    expectError(await developerApiLogin(t, "dev@example.com", "developer password"), 429, "rate_limited");
  });
});

describe("no stranger can lock an account out (issue 39 item 6)", () => {
  it("a device that signed in is never refused the right password, however many addresses guess", async () => {
    const t = await startBackend(LIMITS);
    const tenant = await signupTenant(t);
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.7")).status).toBe(200);
    await guessFromMany(t, tenant.email, 40);
    // A device the account does not know waits: the account-wide count is past its 20.
    expectError(await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.99"), 429, "rate_limited");
    // The device that signed in before does not.
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.7")).status).toBe(200);
  });

  it("one address's guesses hold back that address, not the account: others get 20 failures in all first", async () => {
    const t = await startBackend(LIMITS);
    const tenant = await signupTenant(t);
    for (let i = 0; i < 5; i++) expectError(await tenantLogin(t, tenant.email, "not the password", "198.51.100.1"), 401, "invalid_credentials");
    const waiting = await tenantLogin(t, tenant.email, PASSWORD, "198.51.100.1");
    expectError(waiting, 429, "rate_limited");
    expect(waiting.headers.get("retry-after")).toBe("1");
    // Another address, never signed in before: not held back by five failures of someone else.
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.50")).status).toBe(200);
  });

  it("many addresses guessing together are slowed down, doubling, for devices the account does not know", async () => {
    const t = await startBackend(LIMITS);
    const tenant = await signupTenant(t);
    await guessFromMany(t, tenant.email, 20);
    const first = await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.1");
    expectError(first, 429, "rate_limited");
    expect(first.headers.get("retry-after")).toBe("1");
    t.clock.advance(1000);
    expectError(await tenantLogin(t, tenant.email, "still not it", "198.51.11.1"), 401, "invalid_credentials");
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.2")).headers.get("retry-after")).toBe("2");
    t.clock.advance(2000);
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.3")).status).toBe(200);
  });

  it("a verified sign-in clears the account's count", async () => {
    const t = await startBackend(LIMITS);
    const tenant = await signupTenant(t);
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.7")).status).toBe(200);
    await guessFromMany(t, tenant.email, 19);
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.7")).status).toBe(200);
    await guessFromMany(t, tenant.email, 19, 11);
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.8")).status).toBe(200);
    // An address that guessed wrong 5 times keeps its own wait through the owner's sign-in.
    for (let i = 0; i < 5; i++) await tenantLogin(t, tenant.email, "not the password", "198.51.100.66");
    expect((await tenantLogin(t, tenant.email, PASSWORD, "203.0.113.7")).status).toBe(200);
    expectError(await tenantLogin(t, tenant.email, "one more guess", "198.51.100.66"), 429, "rate_limited");
  });

  it("a completed password reset lifts every wait on the account (JSON API and the email link's form)", async () => {
    const t = await startBackend(LIMITS);
    const tenant = await signupTenant(t);
    for (let i = 0; i < 6; i++) await tenantLogin(t, tenant.email, "not the password", "198.51.100.1");
    await guessFromMany(t, tenant.email, 30);
    expectError(await tenantLogin(t, tenant.email, PASSWORD, "198.51.100.1"), 429, "rate_limited");
    const done = await t.request("POST", "/api/v1/auth/reset-password", { key: t.app.publishableKey, body: { token: await resetToken(t, tenant.email), password: "a brand new passphrase" } });
    expect(done.status, done.text).toBe(200);
    expect((await tenantLogin(t, tenant.email, "a brand new passphrase", "198.51.100.1")).status).toBe(200);
    expect((await tenantLogin(t, tenant.email, "a brand new passphrase", "203.0.113.200")).status).toBe(200);

    await guessFromMany(t, tenant.email, 30, 12);
    expectError(await tenantLogin(t, tenant.email, "a brand new passphrase", "203.0.113.201"), 429, "rate_limited");
    const page = await form(t, "/auth/reset-password", { app: t.app.id, token: await resetToken(t, tenant.email), password: "another new passphrase" });
    expect(page.text).toContain("Password changed");
    expect((await tenantLogin(t, tenant.email, "another new passphrase", "203.0.113.201")).status).toBe(200);
  });

  it("a developer's new password (admin API of the process, as `tenantd developer password` on PostgreSQL) lifts the developer's wait", async () => {
    const t = await startBackend(LIMITS);
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    for (let i = 0; i < 6; i++) await dashboardLogin(t, "dev@example.com", "wrong password");
    expectError(await dashboardLogin(t, "dev@example.com", "developer password"), 429, "rate_limited");
    await t.backend.admin.setDeveloperPassword("dev@example.com", "a new developer passphrase");
    expect((await dashboardLogin(t, "dev@example.com", "a new developer passphrase")).status).toBe(200);
  });
});

describe("one password rule for every reset (issue 39 item 8)", () => {
  it("the email link's form refuses a common password, saying why, and the link still works", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const token = await resetToken(t, tenant.email);
    const refused = await form(t, "/auth/reset-password", { app: t.app.id, token, password: "password123" });
    expect(refused.text).toContain("Password not changed");
    expect(refused.text).toContain("most common passwords");
    expectError(await tenantLogin(t, tenant.email, "password123", "192.0.2.1"), 401, "invalid_credentials");
    expect((await form(t, "/auth/reset-password", { app: t.app.id, token, password: "a strong page passphrase" })).text).toContain("Password changed");
    expect((await tenantLogin(t, tenant.email, "a strong page passphrase", "192.0.2.1")).status).toBe(200);
  });
});

describe("dashboard informational findings (issue 39)", () => {
  it("a fresh server in production names the data directory's path only to a browser on the machine itself", async () => {
    const t = await startBackend({ mode: "production", email: { transport: "outbox" }, trustProxy: true });
    const remote = await t.request("GET", "/_/session", { headers: { "x-forwarded-for": "203.0.113.9" } });
    expect(remote.body.firstRun).toBe(true);
    expect(remote.text).not.toContain(t.dataDir);
    expect(remote.body.createDeveloperCommand).toBe("npx tenantd developer create --email you@example.com --data-dir <the server's data directory>");
    const local = await t.request("GET", "/_/session", { headers: { "x-forwarded-for": "127.0.0.1" } });
    expect(local.body.createDeveloperCommand).toContain(JSON.stringify(t.dataDir));
  });

  it("the forwarder reads the path after the dashboard's own /api/, not after a later one", async () => {
    const t = await startBackend();
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    const cookie = (await dashboardLogin(t, "dev@example.com", "developer password")).headers.get("set-cookie")!.split(";")[0]!;
    expect((await t.request("GET", "/_/api/admin/apps", { headers: { cookie } })).status).toBe(200);
    expectError(await t.request("GET", "/_/api/anything/_/api/admin/apps", { headers: { cookie } }), 404, "not_found");
  });
});
