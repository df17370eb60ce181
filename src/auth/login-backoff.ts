import type { Core } from "../core.ts";
import type { Clock } from "../clock.ts";
import type { ClusterRepository } from "../db/repositories.ts";
import { fail } from "../errors.ts";

/** Wrong passwords from one client, on one account, before that client waits. */
const CLIENT_FREE_FAILURES = 5;
/**
 * Wrong passwords on one account from every client together before clients the account does
 * not know wait too: softer than the per-client count, so many addresses guessing together
 * are slowed, yet a known device is never refused by someone else's guesses.
 */
const ACCOUNT_FREE_FAILURES = 20;
export const BACKOFF_MAX_MS = 15 * 60 * 1000;
/** A device that signed in is known for this long after its last sign-in. */
const KNOWN_DEVICE_MS = 30 * 24 * 3600 * 1000;
const MAX_KEYS = 100_000;

/** The wait after the last of `count` failures, counted from `free`: 1 s, doubling to 15 min. */
const waitMs = (count: number, free: number) => Math.min(BACKOFF_MAX_MS, 1000 * 2 ** (count - free));

/** Who signs in (`tenant`/`developer` and the email, app included) and from where (the client's address). */
export interface SignInAttempt {
  account: string;
  client: string;
}

/** Every key of an account starts with `<account>|`; the email is encoded, so no email can forge another account's key. */
export const accountKey = (kind: "tenant" | "developer", email: string, appId?: string) =>
  [kind, ...(appId === undefined ? [] : [appId]), encodeURIComponent(email)].join("|");
const allClients = (account: string) => `${account}|*`;
const oneClient = (a: SignInAttempt) => `${a.account}|@${a.client}`;

interface Failures {
  count: number;
  last: number;
}

/** The store under the backoff: memory in one process (SQLite), the database's tables across nodes (PostgreSQL). */
interface BackoffStore {
  failures(key: string): Promise<Failures | undefined>;
  failed(keys: string[], now: number, forgetBefore: number): Promise<void>;
  forget(keys: string[]): Promise<void>;
  /** Forgets the failures of every key starting with `prefix`. */
  clear(prefix: string): Promise<void>;
  known(key: string, now: number): Promise<boolean>;
  remember(key: string, now: number): Promise<void>;
}

/**
 * Bounded maps. At the cap, failures that no longer count or have not reached a wait go
 * first, and a new key finds no room before a key that is counting is dropped: a flood of
 * junk keys cannot reset an account's count. Known devices: expired ones, then the oldest.
 */
function memoryStore(): BackoffStore {
  const failures = new Map<string, Failures>();
  const devices = new Map<string, number>();
  return {
    failures: async (key) => failures.get(key),
    async failed(keys, now, forgetBefore) {
      for (const key of keys) {
        const f = failures.get(key);
        if (f && f.last >= forgetBefore) {
          f.count++;
          f.last = now;
          continue;
        }
        failures.delete(key);
        if (failures.size >= MAX_KEYS) {
          for (const [k, old] of failures) if (old.last < forgetBefore || old.count < CLIENT_FREE_FAILURES) failures.delete(k);
        }
        if (failures.size < MAX_KEYS) failures.set(key, { count: 1, last: now });
      }
    },
    async forget(keys) {
      for (const key of keys) failures.delete(key);
    },
    async clear(prefix) {
      for (const key of failures.keys()) if (key.startsWith(prefix)) failures.delete(key);
    },
    known: async (key, now) => (devices.get(key) ?? 0) > now,
    async remember(key, now) {
      // Re-inserted, so the map's order stays oldest sign-in first.
      devices.delete(key);
      if (devices.size >= MAX_KEYS) for (const [k, until] of devices) if (until <= now) devices.delete(k);
      for (const k of devices.keys()) {
        if (devices.size < MAX_KEYS) break;
        devices.delete(k);
      }
      devices.set(key, now + KNOWN_DEVICE_MS);
    },
  };
}

function sharedStore(cluster: ClusterRepository): BackoffStore {
  return {
    failures: (key) => cluster.loginFailures(key),
    async failed(keys, now, forgetBefore) {
      for (const key of keys) await cluster.recordLoginFailure(key, now, forgetBefore);
    },
    async forget(keys) {
      for (const key of keys) await cluster.clearLoginFailures(key);
    },
    clear: (prefix) => cluster.clearLoginFailuresFrom(prefix),
    known: (key, now) => cluster.knownDevice(key, now),
    remember: (key, now) => cluster.rememberDevice(key, now + KNOWN_DEVICE_MS),
  };
}

const stores = new WeakMap<Core, BackoffStore>();
function storeOf(core: Core): BackoffStore {
  let store = stores.get(core);
  if (!store) stores.set(core, (store = core.db.cluster ? sharedStore(core.db.cluster) : memoryStore()));
  return store;
}

async function secondsToWait(store: BackoffStore, clock: Clock, attempt: SignInAttempt): Promise<number | null> {
  const now = clock();
  const [mine, all, known] = await Promise.all([store.failures(oneClient(attempt)), store.failures(allClients(attempt.account)), store.known(oneClient(attempt), now)]);
  const until = (f: Failures | undefined, free: number) => (f && f.count >= free ? f.last + waitMs(f.count, free) : 0);
  const end = Math.max(until(mine, CLIENT_FREE_FAILURES), known ? 0 : until(all, ACCOUNT_FREE_FAILURES));
  return end > now ? Math.ceil((end - now) / 1000) : null;
}

/**
 * Runs a password check under the account's backoff. A client that guessed wrong 5 times on
 * the account waits 1 s, 2 s, 4 s … up to 15 minutes after its last failure; after 20
 * failures from all clients together, so do clients that never signed in to it. A device
 * that signed in within 30 days is never held back by others' failures. A success clears the
 * account's count and the client's own, and remembers the device. Off with `rateLimit: false`.
 */
export async function withLoginBackoff<T>(core: Core, attempt: SignInAttempt, check: () => Promise<T>, tooMany?: (wait: number) => string): Promise<T> {
  if (!core.config.rateLimit) return check();
  const store = storeOf(core);
  const wait = await secondsToWait(store, core.clock, attempt);
  if (wait !== null) {
    const message = tooMany?.(wait) ?? `Too many wrong passwords for this account. Try again in ${wait} seconds, or reset the password.`;
    throw fail("rate_limited", message, { "retry-after": String(wait) });
  }
  let result: T;
  try {
    result = await check();
  } catch (e) {
    const code = (e as { body?: { error?: string } }).body?.error;
    if (code === "invalid_credentials") {
      const now = core.clock();
      await store.failed([oneClient(attempt), allClients(attempt.account)], now, now - BACKOFF_MAX_MS * 2);
      if ((await store.failures(oneClient(attempt)))?.count === CLIENT_FREE_FAILURES) await core.hooks.emit("signIn.backoffStarted", { ...attempt, failures: CLIENT_FREE_FAILURES });
    }
    throw e;
  }
  // The account's count and this client's; other clients' own waits stay (they guessed wrong).
  await store.forget([oneClient(attempt), allClients(attempt.account)]);
  await store.remember(oneClient(attempt), core.clock());
  return result;
}

/** Lifts every wait on the account (a completed password reset: whoever guessed, the password changed). */
export async function clearLoginBackoff(core: Core, account: string): Promise<void> {
  if (core.config.rateLimit) await storeOf(core).clear(`${account}|`);
}
