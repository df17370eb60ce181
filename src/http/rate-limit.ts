import type { H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Clock } from "../clock.ts";
import type { RateLimitConfig } from "../config.ts";
import { fail } from "../errors.ts";
import { clientIp } from "./guards.ts";
import type { ClusterRepository } from "../db/repositories.ts";
import { BACKOFF_MAX_MS } from "../auth/login-backoff.ts";

/** The endpoints that count requests; each has its own counters. */
export type RateLimitedEndpoint =
  | "signup"
  | "login"
  | "refresh"
  | "request-password-reset"
  | "reset-password"
  | "verify-email"
  | "resend-verification"
  | "developer-login"
  | "oauth-start"
  | "mfa"
  | "passkey"
  | "email-sign-in"
  | "email-sign-in-verify"
  | "anonymous";

interface Window {
  count: number;
  resetAt: number;
}

/** Hard cap on tracked keys; reached only under a flood of distinct IPs or emails. */
const MAX_KEYS = 100_000;

/**
 * Fixed-window counters in memory. A request over any of its limits is refused without
 * creating a window for its other keys, so a refused flood inserts nothing. Expired windows
 * are swept at most once per window length; at the cap, windows seen once go first (a flood
 * of junk keys evicts junk), never a key that is counting toward its limit before those.
 */
export function createRateLimiter(config: RateLimitConfig, clock: Clock) {
  const windowMs = config.windowSeconds * 1000;
  const windows = new Map<string, Window>();
  let nextSweep = 0;

  const sweep = (now: number) => {
    if (now >= nextSweep) {
      for (const [key, w] of windows) if (w.resetAt <= now) windows.delete(key);
      nextSweep = now + windowMs;
    }
    if (windows.size < MAX_KEYS) return;
    // Cold first: a window seen once is what a flood of distinct keys is made of.
    const target = MAX_KEYS - Math.max(1, Math.floor(MAX_KEYS / 100));
    for (const [key, w] of windows) {
      if (windows.size <= target) break;
      if (w.count <= 1) windows.delete(key);
    }
    for (const key of windows.keys()) {
      if (windows.size <= target) break;
      windows.delete(key);
    }
  };

  const live = (key: string, now: number) => {
    const w = windows.get(key);
    return w && w.resetAt > now ? w : undefined;
  };

  return {
    /** Counts one request against every key; returns the seconds to wait when any is over its limit. */
    hit(keys: { key: string; limit: number }[]): number | null {
      const now = clock();
      let retryAfterMs = 0;
      for (const { key, limit } of keys) {
        const w = live(key, now);
        if (w && w.count >= limit) retryAfterMs = Math.max(retryAfterMs, w.resetAt - now);
      }
      if (retryAfterMs > 0) {
        // Refused: existing windows keep counting, no new key is created.
        for (const { key } of keys) {
          const w = live(key, now);
          if (w) w.count++;
        }
        return Math.max(1, Math.ceil(retryAfterMs / 1000));
      }
      sweep(now);
      for (const { key } of keys) {
        let w = live(key, now);
        if (!w) {
          windows.delete(key);
          w = { count: 0, resetAt: now + windowMs };
          windows.set(key, w);
        }
        w.count++;
      }
      return null;
    },
    /** Number of tracked windows (for tests of the memory bound). */
    get size() {
      return windows.size;
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;

const limiters = new WeakMap<Core, RateLimiter>();

function limiterFor(core: Core, config: RateLimitConfig): RateLimiter {
  let limiter = limiters.get(core);
  if (!limiter) {
    limiter = createRateLimiter(config, core.clock);
    limiters.set(core, limiter);
  }
  return limiter;
}

/**
 * Counts the request per client IP and, when the body names one, per email (within the app),
 * for this endpoint. Over the limit: 429 `rate_limited` with `retry-after` in seconds.
 * On PostgreSQL the windows live in the database, so every node counts toward the same
 * limit; on SQLite (one process) they are in memory.
 */
export async function enforceRateLimit(event: H3Event, core: Core, endpoint: RateLimitedEndpoint, scope: { appId?: string; email?: string } = {}): Promise<void> {
  const config = core.config.rateLimit;
  if (!config) return;
  const keys = [{ key: `${endpoint}|ip|${clientIp(event, core)}`, limit: config.perIp }];
  if (scope.email) keys.push({ key: `${endpoint}|email|${scope.appId ?? ""}|${scope.email}`, limit: config.perEmail });
  const retryAfter = core.db.cluster ? await sharedHit(core, core.db.cluster, config, keys) : limiterFor(core, config).hit(keys);
  if (retryAfter !== null) {
    throw fail("rate_limited", `Too many requests. Try again in ${retryAfter} seconds.`, { "retry-after": String(retryAfter) });
  }
}

const sweptAt = new WeakMap<Core, number>();

/**
 * The shared counterpart of `hit`: one upsert counts the request against every key; it is
 * refused when any count passes its limit (as in memory, a refused request still counts).
 * Ended windows are dropped by this node at most once per window length.
 */
async function sharedHit(core: Core, cluster: ClusterRepository, config: RateLimitConfig, keys: { key: string; limit: number }[]): Promise<number | null> {
  const now = core.clock();
  const windowMs = config.windowSeconds * 1000;
  const counts = await cluster.countRequests(keys.map((k) => k.key), windowMs, now);
  let retryAfterMs = 0;
  for (const { key, limit } of keys) {
    const c = counts.find((r) => r.key === key);
    if (c && c.count > limit) retryAfterMs = Math.max(retryAfterMs, c.resetAt - now);
  }
  if (now >= (sweptAt.get(core) ?? 0)) {
    sweptAt.set(core, now + windowMs);
    void cluster.sweepCounters(now, now - BACKOFF_MAX_MS * 2).catch((e: unknown) => core.log.warn("rate-limit sweep failed", { error: e as Error }));
  }
  return retryAfterMs > 0 ? Math.max(1, Math.ceil(retryAfterMs / 1000)) : null;
}
