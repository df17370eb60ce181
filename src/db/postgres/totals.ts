/** Filters whose total is kept per node, across every scope; past it the least recently used go. */
export const PG_TOTALS_SIZE = 20_000;

/**
 * Exact list totals kept per (scope, filter) with the scope's version they were counted at
 * (record_scopes, migration 5). A total is only used by a statement that reads the same
 * version in its own snapshot, so it is exact on every node, whoever wrote meanwhile.
 */
export function createVersionedTotals(maxEntries = PG_TOTALS_SIZE) {
  const entries = new Map<string, { version: number; total: number }>();
  return {
    get(scope: string, filter: string) {
      const k = `${scope}\u0001${filter}`;
      const e = entries.get(k);
      if (e) {
        entries.delete(k);
        entries.set(k, e);
      }
      return e;
    },
    set(scope: string, filter: string, value: { version: number; total: number }) {
      const k = `${scope}\u0001${filter}`;
      entries.delete(k);
      if (entries.size >= maxEntries) entries.delete(entries.keys().next().value!);
      entries.set(k, value);
    },
    get size() {
      return entries.size;
    },
  };
}
