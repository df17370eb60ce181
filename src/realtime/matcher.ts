import type { Condition, Json, Operator } from "../data/query.ts";

/**
 * The list filter language (src/data/query.ts) evaluated in memory, for realtime
 * subscriptions. It gives the answers the stores' SQL gives (src/db/sqlite/records-sql.ts,
 * src/db/postgres/records-sql.ts), which test/realtime-matcher.test.ts checks on random
 * filters against both engines:
 *
 * - a type rank per value in MongoDB's order: 1 null or missing, 2 number, 3 string,
 *   4 object, 5 array, 6 boolean; values of different ranks never compare equal or in range;
 * - strings in code point order (SQLite's BINARY, PostgreSQL's COLLATE "C");
 * - booleans as 0 and 1; objects and arrays equal when their JSON text is (key order counts,
 *   as the stores compare the text as written);
 * - a path walks plain objects only; through an array or a scalar it is missing.
 *
 * `$text` is not offered to subscriptions (its words depend on the collection's language
 * and index); the subscription endpoint refuses it.
 */

/** A record as the feed carries it: times in ms. */
export interface FeedRecord {
  id: string;
  data: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

export type Matcher = (record: FeedRecord) => boolean;

const SURROGATE = /[\ud800-\udfff]/;

/** Code point order: UTF-16 order differs only when a surrogate pair meets a code unit above it. */
function compareText(a: string, b: string): number {
  if (SURROGATE.test(a) || SURROGATE.test(b)) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return a < b ? -1 : a > b ? 1 : 0;
}

function rankOf(v: unknown): number {
  if (v === null || v === undefined) return 1;
  if (typeof v === "number") return 2;
  if (typeof v === "string") return 3;
  if (typeof v === "boolean") return 6;
  return Array.isArray(v) ? 5 : 4;
}

function valueAt(data: Record<string, unknown>, path: string): unknown {
  let v: unknown = data;
  for (const key of path.split(".")) {
    if (v === null || typeof v !== "object" || Array.isArray(v) || !Object.hasOwn(v, key)) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** -1, 0 or 1 for two values of one rank (not null). */
function compareSame(a: unknown, b: Json): number {
  switch (typeof b) {
    case "number":
      return (a as number) < b ? -1 : (a as number) > b ? 1 : 0;
    case "string":
      return compareText(a as string, b);
    case "boolean":
      return Number(a) - Number(b);
    default:
      return compareText(JSON.stringify(a), JSON.stringify(b));
  }
}

function test(op: Exclude<Operator, "$in" | "$ne">, actual: unknown, value: Json): boolean {
  if (value === null) return (op === "$eq" || op === "$gte" || op === "$lte") && rankOf(actual) === 1;
  if (rankOf(actual) !== rankOf(value)) return false;
  const c = compareSame(actual, value);
  switch (op) {
    case "$eq":
      return c === 0;
    case "$gt":
      return c > 0;
    case "$gte":
      return c >= 0;
    case "$lt":
      return c < 0;
    case "$lte":
      return c <= 0;
  }
}

function fieldTest(op: Operator, actual: unknown, value: Json): boolean {
  if (op === "$ne") return !test("$eq", actual, value);
  if (op === "$in") return (value as Json[]).some((v) => test("$eq", actual, v));
  return test(op, actual, value);
}

function metaValue(record: FeedRecord, column: "id" | "created_at" | "updated_at"): string | number {
  return column === "id" ? record.id : column === "created_at" ? record.createdAt : record.updatedAt;
}

/** A meta column is never null: plain comparison of its type (ids as text, times as ms). */
function metaTest(op: Operator, actual: string | number, value: Json): boolean {
  const cmp = (v: Json) => (typeof actual === "string" ? compareText(actual, v as string) : actual - (v as number));
  switch (op) {
    case "$eq":
      return cmp(value) === 0;
    case "$ne":
      return cmp(value) !== 0;
    case "$gt":
      return cmp(value) > 0;
    case "$gte":
      return cmp(value) >= 0;
    case "$lt":
      return cmp(value) < 0;
    case "$lte":
      return cmp(value) <= 0;
    case "$in":
      return (value as Json[]).some((v) => cmp(v) === 0);
  }
}

/** The filter's conditions as one predicate; every condition must hold (the lists' AND). */
export function compileMatcher(conditions: readonly Condition[]): Matcher {
  const tests = conditions.map((c): Matcher => {
    if (c.op === "$text") throw new Error("realtime matcher: $text is refused before matching");
    const { target, op, value } = c;
    if (target.kind === "meta") return (r) => metaTest(op, metaValue(r, target.column), value);
    if (target.kind !== "field") throw new Error("realtime matcher: unknown target");
    const path = target.path;
    return (r) => fieldTest(op, valueAt(r.data, path), value);
  });
  return (record) => tests.every((t) => t(record));
}
