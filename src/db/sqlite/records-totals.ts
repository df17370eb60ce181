/** Entries kept across every (app, tenant, collection); past it the least recently used scopes go. */
export const TOTALS_CACHE_SIZE = 20_000;

/**
 * Exact `total`s of record lists, remembered per (app, tenant, collection) and filter so
 * that paging through a large result counts its matches once, not on every page.
 *
 * Exactness: every write through the records repository forgets its scope's totals before
 * it returns; any commit by another connection (the CLI, a second server process) shows in
 * SQLite's `data_version`. Every lookup and store passes the data_version the list read
 * (records.ts: after its page, or in the transaction of its count); a version other than the
 * last one seen forgets everything. Records also leave through
 * cascades (a tenant or an app deleted): their scopes can no longer list, and ids are never
 * reused.
 */
export function createTotalsCache(maxEntries = TOTALS_CACHE_SIZE) {
  let seenVersion: number | undefined;
  /** scope key → filter key → total; Map order is recency of use */
  const scopes = new Map<string, Map<string, number>>();
  let entries = 0;

  const scopeKey = (appId: string, tenantId: string, collection: string) => `${appId}\u0000${tenantId}\u0000${collection}`;

  function forgetScope(key: string) {
    const m = scopes.get(key);
    if (!m) return;
    entries -= m.size;
    scopes.delete(key);
  }

  function checkOtherWriters(version: number) {
    if (version !== seenVersion) {
      seenVersion = version;
      scopes.clear();
      entries = 0;
    }
  }

  return {
    scopeKey,
    /** `version`: data_version, read after the list's page or in its transaction. */
    get(scope: string, filter: string, version: number): number | undefined {
      checkOtherWriters(version);
      const m = scopes.get(scope);
      if (!m) return undefined;
      scopes.delete(scope);
      scopes.set(scope, m);
      return m.get(filter);
    },
    /** `version`: the data_version of the snapshot `total` was counted in. */
    set(scope: string, filter: string, total: number, version: number): void {
      checkOtherWriters(version);
      let m = scopes.get(scope);
      if (!m) {
        m = new Map();
        scopes.set(scope, m);
      }
      if (!m.has(filter)) entries++;
      m.set(filter, total);
      while (entries > maxEntries && scopes.size > 0) forgetScope(scopes.keys().next().value!);
    },
    /** Called by every write to a scope's records, inside or right after its transaction. */
    forget(scope: string): void {
      forgetScope(scope);
    },
    get size() {
      return entries;
    },
  };
}

export type TotalsCache = ReturnType<typeof createTotalsCache>;
