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

/** Failed sign-ins of one account before it backs off; then the wait doubles per failure. */
const BACKOFF_FREE_FAILURES = 5;
const BACKOFF_MAX_MS = 15 * 60 * 1000;
const BACKOFF_MAX_KEYS = 100_000;

interface Failures {
  count: number;
  last: number;
}

/**
 * Per-account backoff on wrong passwords: after 5 failures in a row, each further attempt
 * on that account must wait 1 s, 2 s, 4 s … up to 15 minutes after the last failure,
 * whatever address it comes from. A successful sign-in clears it.
 */
export function createLoginBackoff(clock: Clock) {
  const failures = new Map<string, Failures>();
  const waitMs = (f: Failures) => Math.min(BACKOFF_MAX_MS, 1000 * 2 ** (f.count - BACKOFF_FREE_FAILURES));
  return {
    /** Seconds to wait before this account may try again, or null. */
    retryAfter(key: string): number | null {
      const f = failures.get(key);
      if (!f || f.count < BACKOFF_FREE_FAILURES) return null;
      const left = f.last + waitMs(f) - clock();
      return left > 0 ? Math.ceil(left / 1000) : null;
    },
    failed(key: string): void {
      const now = clock();
      const f = failures.get(key);
      // Forgotten once the longest wait has passed since the last failure.
      if (f && now - f.last < BACKOFF_MAX_MS * 2) {
        f.count++;
        f.last = now;
        return;
      }
      if (failures.size >= BACKOFF_MAX_KEYS) {
        for (const [k, old] of failures) if (now - old.last >= BACKOFF_MAX_MS * 2 || old.count < BACKOFF_FREE_FAILURES) failures.delete(k);
      }
      if (failures.size < BACKOFF_MAX_KEYS) failures.set(key, { count: 1, last: now });
    },
    succeeded(key: string): void {
      failures.delete(key);
    },
  };
}

const backoffs = new WeakMap<Core, ReturnType<typeof createLoginBackoff>>();

/**
 * Runs a password check for `account` under its backoff: 429 while the account must wait,
 * a failure (`invalid_credentials`) counted, a success clearing the count. Off with `rateLimit: false`.
 */
export async function withLoginBackoff<T>(core: Core, account: string, check: () => Promise<T>): Promise<T> {
  if (!core.config.rateLimit) return check();
  let backoff = backoffs.get(core);
  if (!backoff) backoffs.set(core, (backoff = createLoginBackoff(core.clock)));
  const wait = backoff.retryAfter(account);
  if (wait !== null) {
    throw fail("rate_limited", `Too many wrong passwords for this account. Try again in ${wait} seconds, or reset the password.`, { "retry-after": String(wait) });
  }
  try {
    const result = await check();
    backoff.succeeded(account);
    return result;
  } catch (e) {
    const code = (e as { body?: { error?: string } }).body?.error;
    if (code === "invalid_credentials") backoff.failed(account);
    throw e;
  }
}
