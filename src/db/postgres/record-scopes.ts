import type { PgSql } from "./connection.ts";

/** A tenant's count deltas past which a reader folds them. */
export const FOLD_DELTAS = 32;

/**
 * Folds a tenant's record-count deltas (record_scopes, migration 5) into one row per
 * collection, when a reader (a list, the quota check) found many: the sums, and so every
 * collection's version, stay the same. A concurrent fold or write is safe: a fold deletes
 * only rows it sees and inserts exactly their sums. One fold per tenant at a time per node;
 * `settled` lets closing wait for those in flight.
 */
export function createScopeFolds(sql: PgSql) {
  const running = new Map<string, Promise<unknown>>();
  return {
    fold(appId: string, tenantId: string): void {
      const key = `${appId}\u0000${tenantId}`;
      if (running.has(key)) return;
      const run = sql`WITH gone AS (DELETE FROM record_scopes WHERE tenant_id = ${tenantId} AND app_id = ${appId} RETURNING collection, records, bytes, writes)
          INSERT INTO record_scopes (tenant_id, app_id, collection, records, bytes, writes)
          SELECT ${tenantId}, ${appId}, collection, SUM(records), SUM(bytes), SUM(writes) FROM gone GROUP BY collection`
        // A tenant deleted meanwhile takes its deltas with it: nothing to keep.
        .catch(() => undefined)
        .finally(() => running.delete(key));
      running.set(key, run);
    },
    async settled(): Promise<void> {
      await Promise.all(running.values());
    },
  };
}

export type ScopeFolds = ReturnType<typeof createScopeFolds>;
