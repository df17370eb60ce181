import type { SqliteDb } from "./connection.ts";
import { dataVersionWatcher } from "./data-version.ts";

/**
 * Rows of one table kept in memory by id, for reads made on every request (a session's
 * state, the tenant behind a bearer), so the read is a map lookup instead of a query.
 *
 * Nothing has to remember to invalidate it:
 * - every UPDATE or DELETE of the table on this connection (any code path, a cascade, code
 *   not yet written) fires a TEMP trigger that calls back and drops the row's entry before
 *   the statement returns. TEMP triggers live only on this connection: the database file
 *   stays plain SQLite for the CLI and other tools. An INSERT needs nothing: unknown keys
 *   are never remembered.
 * - a commit by any other connection (the CLI, a second process, a worker thread) changes
 *   SQLite's `data_version`, read at most every FRESHNESS_MS of `now` (data-version.ts), which empties
 *   the connection's caches. Without `now` it is read on that call.
 */
export function createRowCache<V>(db: SqliteDb, table: "sessions" | "tenants", load: (id: string) => V | undefined, maxEntries: number) {
  const cache = new Map<string, V>();
  const w = dataVersionWatcher(db);
  w.listeners.add(() => cache.clear());
  const changed = `tenantd_${table}_row_changed`;
  db.function(changed, { deterministic: false }, (key: unknown) => {
    cache.delete(String(key));
    return null;
  });
  db.exec(`
    CREATE TEMP TRIGGER IF NOT EXISTS tenantd_${table}_row_updated AFTER UPDATE ON main.${table} BEGIN SELECT ${changed}(OLD.id); END;
    CREATE TEMP TRIGGER IF NOT EXISTS tenantd_${table}_row_deleted AFTER DELETE ON main.${table} BEGIN SELECT ${changed}(OLD.id); END;
  `);
  return {
    /** `now`: the caller's clock (ms), which paces the look at other connections' commits. */
    get(key: string, now?: number): V | undefined {
      w.check(now);
      const hit = cache.get(key);
      if (hit !== undefined) return hit;
      const row = load(key);
      // Unknown keys are not remembered: a forged or purged id must not fill the cache.
      if (row === undefined) return undefined;
      if (cache.size >= maxEntries) cache.delete(cache.keys().next().value!);
      cache.set(key, row);
      return row;
    },
    get size() {
      return cache.size;
    },
  };
}
