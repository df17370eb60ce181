import type { H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Clock } from "../clock.ts";
import type { RateLimitConfig } from "../config.ts";
import { fail } from "../errors.ts";
import { clientIp } from "./guards.ts";

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
  | "oauth-start";

interface Window {
  count: number;
  resetAt: number;
}

/** Hard cap on tracked keys; reached only under a flood of distinct IPs or emails. */
const MAX_KEYS = 100_000;

/**
 * Fixed-window counters in memory. Expired windows are swept at most once per window length,
 * and the map never holds more than MAX_KEYS entries (the oldest windows go first), so a
 * flood of distinct keys cannot grow memory without bound.
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
    // Map order is insertion order and a new window is re-inserted, so the first keys are the oldest.
    for (const key of windows.keys()) {
      if (windows.size < MAX_KEYS) break;
      windows.delete(key);
    }
  };

  return {
    /** Counts one request against every key; returns the seconds to wait when any is over its limit. */
    hit(keys: { key: string; limit: number }[]): number | null {
      const now = clock();
      sweep(now);
      let retryAfterMs = 0;
      for (const { key, limit } of keys) {
        let w = windows.get(key);
        if (!w || w.resetAt <= now) {
          windows.delete(key);
          w = { count: 0, resetAt: now + windowMs };
          windows.set(key, w);
        }
        w.count++;
        if (w.count > limit) retryAfterMs = Math.max(retryAfterMs, w.resetAt - now);
      }
      return retryAfterMs > 0 ? Math.max(1, Math.ceil(retryAfterMs / 1000)) : null;
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
 */
export function enforceRateLimit(event: H3Event, core: Core, endpoint: RateLimitedEndpoint, scope: { appId?: string; email?: string } = {}): void {
  const config = core.config.rateLimit;
  if (!config) return;
  const keys = [{ key: `${endpoint}|ip|${clientIp(event, core)}`, limit: config.perIp }];
  if (scope.email) keys.push({ key: `${endpoint}|email|${scope.appId ?? ""}|${scope.email}`, limit: config.perEmail });
  const retryAfter = limiterFor(core, config).hit(keys);
  if (retryAfter !== null) {
    throw fail("rate_limited", `Too many requests. Try again in ${retryAfter} seconds.`, { "retry-after": String(retryAfter) });
  }
}
