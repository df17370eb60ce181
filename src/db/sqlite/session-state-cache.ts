import type { SqliteDb } from "./connection.ts";
import type { SessionState } from "../types.ts";

/** Sessions whose state is kept in memory; past it the earliest loaded go first. */
export const SESSION_CACHE_SIZE = 50_000;
/**
 * How long another process's commit (the CLI ending a session) may go unseen. Reading
 * `data_version` costs as much as the session query it saves, so it is read at most this
 * often, as the app cache does (src/db/sqlite/apps.ts): the same 0.1 s for every CLI change.
 */
export const SESSION_FRESHNESS_MS = 100;

interface RawSession {
  id: string;
  tenant_id: string;
  app_id: string;
  expires_at: number;
  ended_at: number | null;
}

/**
 * The state of sessions, as the tenant guard checks it on every request, kept in memory so
 * the check is a map lookup instead of a query.
 *
 * Revocation stays instant because nothing has to remember to invalidate it:
 * - every write to `sessions` on this connection (logout, password reset, refresh-reuse
 *   revocation, family removal, purge, a tenant's deletion by cascade, code not yet
 *   written) fires a TEMP trigger that calls back into this cache and drops the row's
 *   entry, before the write's statement returns. TEMP triggers live only on this
 *   connection: the database file stays plain SQLite for the CLI and other tools.
 * - a commit by any other connection (the CLI, a second process) changes SQLite's
 *   `data_version`, read at most every SESSION_FRESHNESS_MS, which empties the cache.
 * Expiry needs no entry removal: the guard compares `expiresAt` with its clock.
 */
export function createSessionStateCache(db: SqliteDb, maxEntries = SESSION_CACHE_SIZE) {
  const cache = new Map<string, SessionState>();
  const read = db.prepare<[string], RawSession>("SELECT id, tenant_id, app_id, expires_at, ended_at FROM sessions WHERE id = ?");
  const dataVersion = db.prepare("PRAGMA data_version").pluck();
  let seenVersion: unknown = dataVersion.get();
  let checkedAt = -Infinity;

  db.function("tenantd_session_changed", { deterministic: false }, (id: unknown) => {
    cache.delete(String(id));
    return null;
  });
  db.exec(`
    CREATE TEMP TRIGGER IF NOT EXISTS tenantd_session_updated AFTER UPDATE ON main.sessions BEGIN SELECT tenantd_session_changed(OLD.id); END;
    CREATE TEMP TRIGGER IF NOT EXISTS tenantd_session_deleted AFTER DELETE ON main.sessions BEGIN SELECT tenantd_session_changed(OLD.id); END;
  `);

  return {
    /**
     * `now`: the guard's clock (ms), which paces the look at other processes' commits;
     * without it, other processes' commits are looked for on this call.
     */
    get(sessionId: string, now?: number): SessionState | undefined {
      if (now === undefined || now - checkedAt >= SESSION_FRESHNESS_MS || now < checkedAt) {
        checkedAt = now ?? -Infinity;
        const version = dataVersion.get();
        if (version !== seenVersion) {
          seenVersion = version;
          cache.clear();
        }
      }
      const hit = cache.get(sessionId);
      if (hit) return hit;
      const r = read.get(sessionId);
      // Unknown ids are not remembered: a forged or purged id must not fill the cache.
      if (!r) return undefined;
      const state: SessionState = { id: r.id, tenantId: r.tenant_id, appId: r.app_id, expiresAt: r.expires_at, endedAt: r.ended_at };
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(sessionId, state);
      return state;
    },
    get size() {
      return cache.size;
    },
  };
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
