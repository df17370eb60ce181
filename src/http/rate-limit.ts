import type { H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Clock } from "../clock.ts";
import type { RateLimitConfig } from "../config.ts";
import { fail } from "../errors.ts";
import { clientIp } from "./guards.ts";
import type { ClusterRepository } from "../db/repositories.ts";

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

/** Failed sign-ins of one account before it backs off; then the wait doubles per failure. */
const BACKOFF_FREE_FAILURES = 5;
const BACKOFF_MAX_MS = 15 * 60 * 1000;
const BACKOFF_MAX_KEYS = 100_000;

/** The wait after the last of `count` failures. */
const backoffWaitMs = (count: number) => Math.min(BACKOFF_MAX_MS, 1000 * 2 ** (count - BACKOFF_FREE_FAILURES));

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
  const waitMs = (f: Failures) => backoffWaitMs(f.count);
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

type LoginBackoff = Pick<ReturnType<typeof createLoginBackoff>, "retryAfter" | "failed" | "succeeded">;
type AsyncBackoff = { [K in keyof LoginBackoff]: (key: string) => Promise<ReturnType<LoginBackoff[K]>> };

/** The backoff over the database's `login_failures`: every node sees the same failures. */
function sharedBackoff(cluster: ClusterRepository, clock: Clock): AsyncBackoff {
  return {
    async retryAfter(key) {
      const f = await cluster.loginFailures(key);
      if (!f || f.count < BACKOFF_FREE_FAILURES) return null;
      const left = f.last + backoffWaitMs(f.count) - clock();
      return left > 0 ? Math.ceil(left / 1000) : null;
    },
    async failed(key) {
      const now = clock();
      await cluster.recordLoginFailure(key, now, now - BACKOFF_MAX_MS * 2);
    },
    async succeeded(key) {
      await cluster.clearLoginFailures(key);
    },
  };
}

const backoffs = new WeakMap<Core, AsyncBackoff>();

function backoffFor(core: Core): AsyncBackoff {
  let backoff = backoffs.get(core);
  if (!backoff) {
    if (core.db.cluster) backoff = sharedBackoff(core.db.cluster, core.clock);
    else {
      const local = createLoginBackoff(core.clock);
      backoff = { retryAfter: async (k) => local.retryAfter(k), failed: async (k) => local.failed(k), succeeded: async (k) => local.succeeded(k) };
    }
    backoffs.set(core, backoff);
  }
  return backoff;
}

/**
 * Runs a password check for `account` under its backoff: 429 while the account must wait,
 * a failure (`invalid_credentials`) counted, a success clearing the count. Off with `rateLimit: false`.
 * On PostgreSQL the failures are shared by every node.
 */
export async function withLoginBackoff<T>(core: Core, account: string, check: () => Promise<T>): Promise<T> {
  if (!core.config.rateLimit) return check();
  const backoff = backoffFor(core);
  const wait = await backoff.retryAfter(account);
  if (wait !== null) {
    throw fail("rate_limited", `Too many wrong passwords for this account. Try again in ${wait} seconds, or reset the password.`, { "retry-after": String(wait) });
  }
  let result: T;
  try {
    result = await check();
  } catch (e) {
    const code = (e as { body?: { error?: string } }).body?.error;
    if (code === "invalid_credentials") await backoff.failed(account);
    throw e;
  }
  await backoff.succeeded(account);
  return result;
}
