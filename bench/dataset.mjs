// The records both servers are loaded with, so every list query matches the same rows.

/**
 * Record `i` of a seeded collection: `status` (1 % per value) and `state` (50 %) are declared
 * indexed fields, `category` (1 %) and `phase` (50 %) are not.
 */
export function recordData(i) {
  const half = i % 2 === 0 ? "open" : "done";
  return { status: `s${i % 100}`, category: `c${(i * 7) % 100}`, state: half, phase: half, n: i, title: `bench item ${i}` };
}

/** Collections and the per-app settings tenantd gets for them (indexed and unique fields). */
export const COLLECTIONS = {
  items: "benchitems",
  big: "bench100k",
  spread: "benchspread",
  upsert: "benchupsert",
  million: "bench1m",
};

export const COLLECTION_SETTINGS = {
  [COLLECTIONS.big]: { indexed: ["status", "state"], unique: [] },
  // Search on (issue 44's search rows): the seeders write every record's words in SQL
  // (searchWordsSql), checked against tenantd's own words for the record.
  [COLLECTIONS.million]: { indexed: ["status"], unique: [], search: { language: "simple" } },
  [COLLECTIONS.spread]: { indexed: ["status"], unique: [] },
  [COLLECTIONS.upsert]: { indexed: [], unique: ["key"] },
};

/**
 * Issue 43: an organization collection holding the same 100,000 records as `bench100k`, with
 * the same declared fields (org-list-half). Kept out of COLLECTIONS: the baselines have no
 * organizations.
 */
export const ORG_COLLECTION = "benchorg100k";
COLLECTION_SETTINGS[ORG_COLLECTION] = { ...COLLECTION_SETTINGS[COLLECTIONS.big], org: true };

/**
 * The per-tenant record cap, raised from the default 100,000 (src/account/quotas-schema.ts):
 * seven rounds of `create` add more than that to one tenant. The cap is still checked before
 * every create, at the same cost whatever its value (the count is kept in memory).
 */
export const BENCH_QUOTAS = { records: 100_000_000 };

/** The page origin of the bench app (its passkey relying party: bench.tenantd.test). */
export const BENCH_ORIGIN = "https://bench.tenantd.test";

/** The list filters: 1 % of the records match each (value 7 of 100). */
export const FILTERS = {
  indexed: { status: "s7" },
  unindexed: { category: "c49" },
};

/** The 50 %-selectivity filters: half of the records match each. */
export const HALF_FILTERS = {
  indexed: { state: "open" },
  unindexed: { phase: "open" },
};

/** Matches of either filter among records 0..n-1 (i % 100 == 7, and (7 i) % 100 == 49 for i % 100 == 7). */
export function expectedMatches(n) {
  let count = 0;
  for (let i = 0; i < n; i++) if (i % 100 === 7) count++;
  return count;
}

export const SIZES = {
  big: 100_000,
  million: 1_000_000,
  spreadTenants: 10_000,
  /** members of the organization of org-members-10k, its owner included */
  orgMembers: 10_000,
  perTenant: 100,
};

/** Seeded rows are spaced 1 ms apart ending an hour ago, so records created by the load are newest. */
export function seedTime(i, total) {
  return Date.now() - 3_600_000 - (total - i);
}

/**
 * Full-text searches of the million collection (search-* rows): `rare` is one record's own
 * word (the number in its title), `common` is a word of 1 % of the records (status s7, the
 * same matches as the indexed list filter).
 */
export const SEARCHES = { rare: "424242", common: "s7" };
export const SEARCH_MATCHES = { rare: 1, common: (n) => expectedMatches(n) };

/**
 * The words of recordData(i) in order, as SQL over the record's `data` JSON text (`json` reads a
 * field: SQLite `json_extract(data, '$.f')`, PostgreSQL `doc ->> 'f'`): its strings, keys in
 * order (status, category, state, phase, title; `n` is a number). The title's words are
 * separated by spaces already and hold no capitals or accents. tenantd's seeders check the
 * result against tenantd's own words for a seeded record.
 */
export const searchWordsSql = (json) => ["status", "category", "state", "phase", "title"].map(json).join(" || ' ' || ");

/** The cursor rows: pages of this many records of the 100,000-record collection, page 1 and page DEEP_PAGE. */
export const PAGE = { size: 100, deep: 1000 };

/** The batch row: this many creates in one POST /batch. */
export const BATCH_SIZE = 100;
