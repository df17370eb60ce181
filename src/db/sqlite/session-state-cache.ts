import type { SqliteDb } from "./connection.ts";
import type { SessionState } from "../types.ts";
import { createRowCache } from "./row-cache.ts";
import { FRESHNESS_MS } from "../shared.ts";

/** Sessions whose state is kept in memory; past it the earliest loaded go first. */
export const SESSION_CACHE_SIZE = 50_000;
/** How long another process's commit (the CLI ending a session) may go unseen (row-cache.ts). */
export const SESSION_FRESHNESS_MS = FRESHNESS_MS;

interface RawSession {
  id: string;
  tenant_id: string;
  app_id: string;
  expires_at: number;
  ended_at: number | null;
}

/**
 * The state of sessions, as the tenant guard checks it on every request, kept in memory so
 * the check is a map lookup instead of a query. Revocation stays instant: every write to
 * `sessions` on this connection (logout, password reset, refresh-reuse revocation, family
 * removal, purge, a tenant's deletion by cascade) drops the row's entry through a TEMP
 * trigger, and another process's commit is seen within SESSION_FRESHNESS_MS (data-version.ts).
 * Expiry needs no entry removal: the guard compares `expiresAt` with its clock.
 */
export function createSessionStateCache(db: SqliteDb, maxEntries = SESSION_CACHE_SIZE) {
  const read = db.prepare<[string], RawSession>("SELECT id, tenant_id, app_id, expires_at, ended_at FROM sessions WHERE id = ?");
  return createRowCache<SessionState>(
    db,
    "sessions",
    (id) => {
      const r = read.get(id);
      return r && { id: r.id, tenantId: r.tenant_id, appId: r.app_id, expiresAt: r.expires_at, endedAt: r.ended_at };
    },
    maxEntries,
  );
}

export type SessionStateCache = ReturnType<typeof createSessionStateCache>;

const caches = new WeakMap<SqliteDb, SessionStateCache>();

/** The session state cache of this connection, created on first use. */
export function sessionStates(db: SqliteDb): SessionStateCache {
  let c = caches.get(db);
  if (!c) {
    c = createSessionStateCache(db);
    caches.set(db, c);
  }
  return c;
}
