import type { SqliteDb } from "./connection.ts";

/** Tenants whose record count is kept in memory; past it the least recently used go. */
export const RECORD_COUNTS_SIZE = 20_000;

/**
 * How many records each tenant stores, kept in memory for the records quota checked before
 * every create. Counting on each create read the tenant's whole index range: at 10,000
 * records that was most of a create's CPU, and it grew with the tenant.
 *
 * Exactness without anyone remembering to update it:
 * - a TEMP trigger on this connection adds one to a known count on every insert into
 *   `records` and forgets the count on every delete (a record deleted, or a tenant or app
 *   deleted by cascade), before the write's statement returns. Records are inserted as the
 *   last statement of their transaction, so a rollback never follows a counted insert.
 * - a commit by any other connection (the CLI, a second process) changes SQLite's
 *   `data_version`, read on every lookup (one statement step), which forgets every count.
 */
export function createRecordCounts(db: SqliteDb, maxEntries = RECORD_COUNTS_SIZE) {
  const counts = new Map<string, number>();
  const count = db.prepare<[string, string], number>("SELECT COUNT(*) FROM records WHERE tenant_id = ? AND app_id = ?").pluck();
  const dataVersion = db.prepare("PRAGMA data_version").pluck();
  let seenVersion: unknown = dataVersion.get();
  const key = (appId: unknown, tenantId: unknown) => `${String(appId)}\u0000${String(tenantId)}`;

  db.function("tenantd_record_added", { deterministic: false }, (appId: unknown, tenantId: unknown) => {
    const k = key(appId, tenantId);
    const n = counts.get(k);
    if (n !== undefined) counts.set(k, n + 1);
    return null;
  });
  db.function("tenantd_record_removed", { deterministic: false }, (appId: unknown, tenantId: unknown) => {
    counts.delete(key(appId, tenantId));
    return null;
  });
  db.exec(`
    CREATE TEMP TRIGGER IF NOT EXISTS tenantd_record_added AFTER INSERT ON main.records BEGIN SELECT tenantd_record_added(NEW.app_id, NEW.tenant_id); END;
    CREATE TEMP TRIGGER IF NOT EXISTS tenantd_record_removed AFTER DELETE ON main.records BEGIN SELECT tenantd_record_removed(OLD.app_id, OLD.tenant_id); END;
    CREATE TEMP TRIGGER IF NOT EXISTS tenantd_record_moved AFTER UPDATE OF app_id, tenant_id ON main.records BEGIN
      SELECT tenantd_record_removed(OLD.app_id, OLD.tenant_id), tenantd_record_removed(NEW.app_id, NEW.tenant_id);
    END;
  `);

  return {
    /** Records the tenant stores across its collections. */
    get(appId: string, tenantId: string): number {
      const version = dataVersion.get();
      if (version !== seenVersion) {
        seenVersion = version;
        counts.clear();
      }
      const k = key(appId, tenantId);
      let n = counts.get(k);
      if (n === undefined) {
        n = count.get(tenantId, appId)!;
        if (counts.size >= maxEntries) counts.delete(counts.keys().next().value!);
      } else {
        counts.delete(k);
      }
      counts.set(k, n);
      return n;
    },
    get size() {
      return counts.size;
    },
  };
}

export type RecordCounts = ReturnType<typeof createRecordCounts>;

const perConnection = new WeakMap<SqliteDb, RecordCounts>();

/** The record counts of this connection, created (with its triggers) on first use. */
export function recordCounts(db: SqliteDb): RecordCounts {
  let c = perConnection.get(db);
  if (!c) {
    c = createRecordCounts(db);
    perConnection.set(db, c);
  }
  return c;
}
