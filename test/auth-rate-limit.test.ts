import { describe, expect, it } from "vitest";
import { developerSession, expectError, serveHttp, signupTenant, startBackend, testClock } from "./_helpers.ts";
import { createRateLimiter } from "../src/http/rate-limit.ts";

const WINDOW = { windowSeconds: 60 };
const from = (ip: string) => ({ "x-forwarded-for": ip });

describe("rate limits", () => {
  const endpoints: { name: string; path: string; body: (i: number) => unknown; key?: false }[] = [
    { name: "signup", path: "/api/v1/auth/signup", body: (i) => ({ email: `s${i}@example.com`, password: "long enough" }) },
    { name: "login", path: "/api/v1/auth/login", body: (i) => ({ email: `l${i}@example.com`, password: "long enough" }) },
    { name: "refresh", path: "/api/v1/auth/refresh", body: () => ({ refreshToken: "rt_unknown" }) },
    { name: "request-password-reset", path: "/api/v1/auth/request-password-reset", body: (i) => ({ email: `r${i}@example.com` }) },
    { name: "reset-password", path: "/api/v1/auth/reset-password", body: () => ({ token: "rst_unknown", password: "long enough" }) },
    { name: "verify-email", path: "/api/v1/auth/verify-email", body: () => ({ token: "evt_unknown" }) },
    { name: "developer login", path: "/api/v1/developer/login", body: (i) => ({ email: `d${i}@example.com`, password: "long enough" }), key: false },
  ];

  it.each(endpoints)("$name: per IP, 429 rate_limited with retry-after, other IPs unaffected, recovered after the window", async (e) => {
    const t = await startBackend({ rateLimit: { ...WINDOW, perIp: 3, perEmail: 100 }, trustProxy: true });
    const send = (i: number, ip: string) => t.request("POST", e.path, { key: e.key === false ? undefined : t.app.publishableKey, body: e.body(i), headers: from(ip) });
    for (let i = 0; i < 3; i++) expect((await send(i, "203.0.113.1")).status).not.toBe(429);
    const limited = await send(3, "203.0.113.1");
    expectError(limited, 429, "rate_limited");
    expect(limited.headers.get("retry-after")).toBe("60");
    expect((await send(4, "203.0.113.2")).status).not.toBe(429);
    t.clock.advance(45_000);
    expect((await send(5, "203.0.113.1")).headers.get("retry-after")).toBe("15");
    t.clock.advance(15_000);
    expect((await send(6, "203.0.113.1")).status).not.toBe(429);
  });

  it("resend-verification: per tenant email, so a leaked token cannot flood an inbox", async () => {
    const t = await startBackend({ rateLimit: { ...WINDOW, perIp: 100, perEmail: 2 } });
    const tenant = await signupTenant(t);
    const resend = () => t.request("POST", "/api/v1/auth/resend-verification", { bearer: tenant.bearer, body: {} });
    expect([(await resend()).status, (await resend()).status]).toEqual([200, 200]);
    expectError(await resend(), 429, "rate_limited");
    t.clock.advance(60_000);
    expect((await resend()).status).toBe(200);
  });

  it("counts per email within the app, whatever the IP or the spelling of the address", async () => {
    const t = await startBackend({ rateLimit: { ...WINDOW, perIp: 100, perEmail: 2 }, trustProxy: true });
    await signupTenant(t, { email: "target@example.com" });
    const other = await t.backend.admin.createApp({ name: "other" });
    const login = (email: string, ip: string, key = t.app.publishableKey) =>
      t.request("POST", "/api/v1/auth/login", { key, body: { email, password: "wrong password" }, headers: from(ip) });
    expect((await login("target@example.com", "198.51.100.1")).status).toBe(401);
    expect((await login("TARGET@example.com ", "198.51.100.2")).status).toBe(401);
    expectError(await login("target@example.com", "198.51.100.3"), 429, "rate_limited");
    // Another email, and the same email in another app, have their own counters.
    expect((await login("someone@example.com", "198.51.100.3")).status).toBe(401);
    expect((await login("target@example.com", "198.51.100.3", other.publishableKey)).status).toBe(401);
    t.clock.advance(60_000);
    expect((await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "target@example.com", password: "correct horse battery" } })).status).toBe(200);
  });

  it("ignores x-forwarded-for unless trustProxy is set: the socket address counts (real HTTP)", async () => {
    const t = await startBackend({ rateLimit: { ...WINDOW, perIp: 2, perEmail: 100 } });
    const { url } = await serveHttp(t.backend);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${url}/api/v1/auth/verify-email`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-key": t.app.publishableKey, "x-forwarded-for": `192.0.2.${i}` },
        body: JSON.stringify({ token: "evt_unknown" }),
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([400, 400, 429]);
  });

  it("is off with rateLimit: false", async () => {
    const t = await startBackend({ rateLimit: false });
    for (let i = 0; i < 40; i++) expect((await t.request("POST", "/api/v1/auth/verify-email", { key: t.app.publishableKey, body: { token: "evt_x" } })).status).toBe(400);
  });

  it("is on by default", async () => {
    const t = await startBackend({ rateLimit: undefined });
    await developerSession(t, "d@example.com", "developer password");
    const statuses = new Set<number>();
    for (let i = 0; i < 12; i++) statuses.add((await t.request("POST", "/api/v1/developer/login", { body: { email: "d@example.com", password: "wrong password" } })).status);
    expect([...statuses]).toEqual([401, 429]);
  });
});

describe("rate limiter memory", () => {
  it("sweeps expired windows and never tracks more than its cap", () => {
    const clock = testClock();
    const limiter = createRateLimiter({ windowSeconds: 10, perIp: 1, perEmail: 1 }, clock);
    for (let i = 0; i < 5000; i++) limiter.hit([{ key: `ip|${i}`, limit: 1 }]);
    expect(limiter.size).toBe(5000);
    clock.advance(10_000);
    limiter.hit([{ key: "fresh", limit: 1 }]);
    expect(limiter.size).toBe(1);
    for (let i = 0; i < 100_500; i++) limiter.hit([{ key: `flood|${i}`, limit: 1 }]);
    expect(limiter.size).toBeLessThanOrEqual(100_000);
    // The newest windows are the ones kept: the last key is still counted.
    expect(limiter.hit([{ key: "flood|100499", limit: 1 }])).toBe(10);
  });
});

