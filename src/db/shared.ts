import type { AuthChallengeRow, ChallengeOutcome } from "./types.ts";
import type { Condition, Json, SortKey } from "../data/query.ts";

/**
 * What both engines decide the same way. Rows and outcomes are in types.ts; this holds the
 * few values behind them.
 */

/**
 * How stale an in-memory cache (apps; on SQLite also sessions, tenants, entitlements) may be
 * for changes made by another process or node.
 */
export const FRESHNESS_MS = 100;

/** Subscription statuses that grant a plan's entitlements. */
export const ENTITLING_STATUSES = ["active", "trialing", "past_due"] as const;

/** The tenant holds as many records as `cap` allows: the insert was not made. */
export class QuotaReached extends Error {
  constructor(
    readonly cap: number,
    /** `bytes`: instead, the write would take the tenant's record data past `cap` bytes (nothing was written). */
    readonly kind: "records" | "bytes" = "records",
  ) {
    super(kind === "records" ? `record quota of ${cap} reached` : `record byte quota of ${cap} reached`);
  }
}

/** Thrown inside a write transaction (rolling it back) when a unique field's value is taken. */
export class UniqueConflict extends Error {
  constructor(readonly field: string) {
    super(`unique field ${field} taken`);
  }
}

/** A unique or primary-key constraint refused the write (SQLite or PostgreSQL error code). */
export function isUniqueViolation(e: unknown): boolean {
  const code = e instanceof Error && "code" in e ? String((e as { code: unknown }).code) : "";
  return code === "SQLITE_CONSTRAINT_UNIQUE" || code === "SQLITE_CONSTRAINT_PRIMARYKEY" || code === "23505";
}

/** A record's value at a dotted path, the way the filter language reaches it (objects only). */
export function valueAtPath(data: unknown, path: string): Json | undefined {
  let node: unknown = data;
  for (const seg of path.split(".")) {
    if (node === null || typeof node !== "object" || Array.isArray(node) || !Object.hasOwn(node, seg)) return undefined;
    node = (node as Record<string, unknown>)[seg];
  }
  return node as Json;
}

/** The failure of write `index` of a batch (records.batch): the whole batch was rolled back. */
export class BatchFailure extends Error {
  constructor(
    readonly index: number,
    override readonly cause: unknown,
  ) {
    super(`batch write ${index} failed`);
  }
}

/**
 * Write `index` of a batch, then its check: a throw or rejection of either is a BatchFailure
 * naming the write, which rolls the batch back. Synchronous when the write is (SQLite).
 */
export function batchStep<T>(index: number, write: () => T | Promise<T>, check: (index: number, outcome: T) => void): T | Promise<T> {
  const failed = (e: unknown): never => {
    throw new BatchFailure(index, e);
  };
  try {
    const outcome = write();
    if (outcome instanceof Promise) {
      return outcome
        .then((o) => {
          check(index, o);
          return o;
        })
        .catch(failed);
    }
    check(index, outcome);
    return outcome;
  } catch (e) {
    return failed(e);
  }
}
/** What a challenge row says about using it now. */
export function challengeOutcome(row: AuthChallengeRow | undefined, now: number): ChallengeOutcome {
  if (!row) return { ok: false, reason: "unknown" };
  if (row.usedAt !== null) return { ok: false, reason: "used" };
  if (row.expiresAt <= now) return { ok: false, reason: "expired" };
  return { ok: true, row };
}

/**
 * Usage counters (feature keys) a tenant may have per period: each new key is a row, and the
 * key is the tenant's to choose (issue 39 item 4e).
 */
export const MAX_USAGE_KEYS = 100;
/** The previous hash of an app's first audit entry. */
export const AUDIT_GENESIS = "0".repeat(64);

/** Values of one `$in` a list page splits into at most; a longer list reads its matches as one. */
const MAX_IN_BRANCHES = 32;

/**
 * An `$in` on an indexed field under the default order (creation time), as one condition
 * list per value, the `$in` replaced by `$eq`; undefined for any other list. A field's index
 * yields each value's matches in creation order, but not the union of several values', so
 * one statement over the `$in` reads and sorts every match for a page of 20 (half of a
 * 100,000-record collection: 16 ms on SQLite, 30–50 ms on PostgreSQL). Read per value, each
 * branch stops at the page's end and the branches' rows are merged. The values are
 * deduplicated by their JSON text, which equal values share (5 and 5.0 both read `5`), so no
 * record is in two branches. A list that already has an equality on an indexed field walks
 * that field's index and is left as it is.
 */
export function inBranches(conditions: Condition[], sort: readonly SortKey[], indexed: (path: string) => boolean): Condition[][] | undefined {
  if (sort.some((k) => k.target.kind !== "meta" || k.target.column !== "created_at")) return undefined;
  // With a $text the full-text matches lead, once, rather than once per value.
  if (conditions.some((c) => c.op === "$text")) return undefined;
  const onIndex = (c: Condition) => c.target.kind === "field" && indexed(c.target.path);
  if (conditions.some((c) => c.op === "$eq" && onIndex(c))) return undefined;
  const at = conditions.findIndex((c) => c.op === "$in" && onIndex(c));
  if (at === -1) return undefined;
  const c = conditions[at] as Exclude<Condition, { op: "$text" }>;
  const values = [...new Map((c.value as Json[]).map((v) => [JSON.stringify(v), v])).values()];
  if (values.length < 2 || values.length > MAX_IN_BRANCHES) return undefined;
  return values.map((value) => conditions.map((x, i): Condition => (i === at ? { target: c.target, op: "$eq", value } : x)));
}
/**
 * A record as the realtime feed stores it (realtime_changes.data and .before): the stored
 * data spliced in as it is, times in ms. src/realtime turns it into the public record.
 */
export function feedRecord(row: { id: string; data: string; createdAt: number; updatedAt: number }): string {
  return `{"id":${JSON.stringify(row.id)},"data":${row.data},"createdAt":${row.createdAt},"updatedAt":${row.updatedAt}}`;
}

/** The advisory lock (PostgreSQL) every append to the realtime feed takes until its commit, so `seq` order is commit order ("rtfeed" in ASCII). */
export const FEED_LOCK = 0x727466656564n;
