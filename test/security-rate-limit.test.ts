import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, testClock } from "./_helpers.ts";
import { createRateLimiter } from "../src/http/rate-limit.ts";

describe("the rate limiter cannot be reset by a flood of junk keys (review item 9)", () => {
  it("refused requests insert no keys", () => {
    const clock = testClock();
    const limiter = createRateLimiter({ windowSeconds: 60, perIp: 2, perEmail: 5 }, clock);
    const hit = (email: string) => limiter.hit([{ key: "ip|attacker", limit: 2 }, { key: `email|${email}`, limit: 5 }]);
    expect([hit("a"), hit("b")]).toEqual([null, null]);
    const before = limiter.size;
    for (let i = 0; i < 1000; i++) expect(hit(`junk${i}`)).toBe(60);
    expect(limiter.size).toBe(before);
  });

  it("a flood of distinct keys past the cap evicts cold keys, never a hot key counting toward its limit", () => {
    const clock = testClock();
    const limiter = createRateLimiter({ windowSeconds: 600, perIp: 3, perEmail: 3 }, clock);
    const victim = [{ key: "email|victim@example.com", limit: 3 }];
    expect([limiter.hit(victim), limiter.hit(victim), limiter.hit(victim)]).toEqual([null, null, null]);
    expect(limiter.hit(victim)).toBe(600);
    // Before: the oldest window (the victim's) went first, and the attacker guessed again.
    for (let i = 0; i < 120_000; i++) limiter.hit([{ key: `ip|flood${i}`, limit: 3 }]);
    expect(limiter.size).toBeLessThanOrEqual(100_000);
    expect(limiter.hit(victim)).toBe(600);
  });
});

describe("per-account backoff on wrong passwords (review item 9)", () => {
  // Issue 39 item 6 keyed it per (account, client): many addresses together are slowed by a
  // softer account-wide count (security-sign-in.test.ts), so none can lock the owner out.
  it("after 5 wrong passwords from one client it waits, doubling; the right password after the wait works", async () => {
    const t = await startBackend({ rateLimit: { windowSeconds: 60, perIp: 1000, perEmail: 1000 }, trustProxy: true });
    const tenant = await signupTenant(t);
    const login = (password: string, ip = "198.51.100.1") =>
      t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password }, headers: { "x-forwarded-for": ip } });
    for (let i = 0; i < 5; i++) expectError(await login("wrong password!"), 401, "invalid_credentials");
    const waiting = await login("correct horse battery");
    expectError(waiting, 429, "rate_limited");
    expect(waiting.headers.get("retry-after")).toBe("1");
    t.clock.advance(1000);
    expectError(await login("wrong again!!"), 401, "invalid_credentials");
    const longer = await login("correct horse battery");
    expect(longer.headers.get("retry-after")).toBe("2");
    t.clock.advance(2000);
    expect((await login("correct horse battery")).status).toBe(200);
    // Success cleared the count.
    expectError(await login("wrong password!"), 401, "invalid_credentials");
    expect((await login("correct horse battery")).status).toBe(200);
  });
});
