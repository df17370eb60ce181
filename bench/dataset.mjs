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
  [COLLECTIONS.million]: { indexed: ["status"], unique: [] },
  [COLLECTIONS.spread]: { indexed: ["status"], unique: [] },
  [COLLECTIONS.upsert]: { indexed: [], unique: ["key"] },
};

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
  perTenant: 100,
};

/** Seeded rows are spaced 1 ms apart ending an hour ago, so records created by the load are newest. */
export function seedTime(i, total) {
  return Date.now() - 3_600_000 - (total - i);
}
