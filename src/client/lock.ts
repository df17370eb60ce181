import type { ClientStorage } from "./storage.ts";

/** The part of the Web Locks API the client uses (`navigator.locks`). */
export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How long a storage lock is honoured if its holder vanished (a closed tab). */
const LEASE_MS = 10_000;
/** Time for a competing writer's claim to land before a claim counts as won. */
const SETTLE_MS = 25;
const POLL_MS = 30;

/**
 * Runs `fn` while holding a lock shared by every context that shares `storage`, for
 * runtimes without `navigator.locks`. A claim is written, left to settle, and read back:
 * of two contexts claiming at once, the last writer holds it and the other waits. A claim
 * older than its lease is taken over, so a closed tab never blocks the others for long.
 */
export async function withStorageLock<T>(storage: ClientStorage, key: string, fn: () => Promise<T>): Promise<T> {
  const id = Math.random().toString(36).slice(2) + Date.now().toString(36);
  for (;;) {
    const held = parseClaim(await storage.getItem(key));
    if (!held || held.until < Date.now()) {
      await storage.setItem(key, JSON.stringify({ id, until: Date.now() + LEASE_MS }));
      await sleep(SETTLE_MS);
      if (parseClaim(await storage.getItem(key))?.id === id) break;
    }
    await sleep(POLL_MS);
  }
  try {
    return await fn();
  } finally {
    if (parseClaim(await storage.getItem(key))?.id === id) await storage.removeItem(key);
  }
}

function parseClaim(raw: string | null | undefined): { id: string; until: number } | null {
  try {
    const claim = raw ? (JSON.parse(raw) as { id?: unknown; until?: unknown }) : null;
    return claim && typeof claim.id === "string" && typeof claim.until === "number" ? { id: claim.id, until: claim.until } : null;
  } catch {
    return null;
  }
}

/** `navigator.locks` when the runtime has it (browsers, Deno), else the storage protocol. */
export function defaultLocks(): LockManagerLike | undefined {
  const locks = (globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks;
  return locks && typeof locks.request === "function" ? locks : undefined;
}
