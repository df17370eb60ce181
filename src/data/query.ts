import { fail } from "../errors.ts";
import { FIELD_PATH } from "../apps/settings.ts";
import { isPlainObject } from "../tools/merge-patch.ts";

/**
 * The filter and sort language of record lists, parsed into a small tree that
 * src/db/sqlite/records-sql.ts compiles to parameterised SQL. Everything a client can send is
 * checked here; the SQL layer trusts only what this file produces.
 */

export const FILTER_LIMITS = {
  /** characters of the URL-decoded `filter` (and `sort`) parameter */
  maxLength: 4096,
  /** field conditions in one filter (each operator on each field counts one) */
  maxClauses: 20,
  /** nesting of the filter JSON (objects and arrays) */
  maxDepth: 6,
  /** values in one `$in` list */
  maxIn: 100,
  /** keys in one sort */
  maxSortKeys: 4,
} as const;

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The record's own columns, named with a `$` prefix so they never clash with data fields. */
export const META_FIELDS = { $id: "id", $createdAt: "created_at", $updatedAt: "updated_at" } as const;
export type MetaColumn = (typeof META_FIELDS)[keyof typeof META_FIELDS];

export type Target = { kind: "meta"; column: MetaColumn } | { kind: "field"; path: string };
export type Operator = "$eq" | "$ne" | "$gt" | "$gte" | "$lt" | "$lte" | "$in";
const OPERATORS = new Set<string>(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte", "$in"]);

export type Condition =
  | {
      target: Target;
      op: Operator;
      /** for `$in` an array; meta date values are already ms numbers */
      value: Json;
    }
  | TextCondition;

/** `{ "$text": { "$search": "…", "fields"?: [...] } }`: the words are made per collection language by the store (data/text.ts). */
export interface TextCondition {
  target: { kind: "text" };
  op: "$text";
  value: { search: string; fields: string[] };
}

/** Words in one `$search` at most, and fields it may name. */
export const TEXT_LIMITS = { maxLength: 512, maxFields: 8 } as const;

function parseText(spec: Json): TextCondition {
  const example = '{"$text":{"$search":"red shoes","fields":["title"]}}';
  if (!isPlainObject(spec)) throw invalid(`$text takes an object such as ${example}.`);
  const keys = Object.keys(spec).filter((k) => k !== "$search" && k !== "fields");
  if (keys.length > 0) throw invalid(`$text takes only $search and fields, not "${keys[0]!.slice(0, 40)}".`);
  const search = spec.$search;
  if (typeof search !== "string" || search.trim() === "") throw invalid(`$text needs $search, the words to find, as a non-empty string: ${example}.`);
  if (search.length > TEXT_LIMITS.maxLength) throw invalid(`$search is ${search.length} characters long; the maximum is ${TEXT_LIMITS.maxLength}.`);
  const fields = spec.fields ?? [];
  if (!Array.isArray(fields) || fields.length > TEXT_LIMITS.maxFields || fields.some((f) => typeof f !== "string" || !FIELD_PATH.test(f))) {
    throw invalid(`$text fields must be a list of at most ${TEXT_LIMITS.maxFields} field paths such as ["title","body.text"].`);
  }
  return { target: { kind: "text" }, op: "$text", value: { search, fields: fields as string[] } };
}

/** What a list sorts by: a filter's targets, or `$rank`, how well a record matches the filter's `$text` (1 ascending: worst first). */
export type SortTarget = Target | { kind: "rank" };

export interface SortKey {
  target: SortTarget;
  dir: 1 | -1;
}

/** Whether a list is ranked: its order then holds a computed score, so its cursors are positions (cursor.ts). */
export const isRanked = (sort: readonly SortKey[]) => sort.some((k) => k.target.kind === "rank");

const invalid = (message: string) => fail("invalid_filter", `Invalid filter: ${message}`);
const invalidSort = (message: string) => fail("invalid_sort", `Invalid sort: ${message}`);

function parseJsonParam(raw: string, name: "filter" | "sort", err: (m: string) => Error): unknown {
  if (raw.length > FILTER_LIMITS.maxLength) throw err(`the ${name} is ${raw.length} characters long; the maximum is ${FILTER_LIMITS.maxLength}.`);
  try {
    return JSON.parse(raw);
  } catch {
    throw err(`${name} must be URL-encoded JSON, e.g. ${name}=${encodeURIComponent(name === "filter" ? '{"status":"open"}' : '{"$createdAt":-1}')}.`);
  }
}

function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (isPlainObject(value)) return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

/** A filter or sort key: `$id`/`$createdAt`/`$updatedAt`, or a dotted path into `data`. */
function parseTarget(key: string, err: (m: string) => Error): Target {
  if (Object.hasOwn(META_FIELDS, key)) return { kind: "meta", column: META_FIELDS[key as keyof typeof META_FIELDS] };
  if (key.startsWith("$")) {
    throw err(`"${key}" is not supported. Filters compare fields with $eq, $ne, $gt, $gte, $lt, $lte and $in, and search text with $text; the record's own fields are $id, $createdAt and $updatedAt.`);
  }
  if (!FIELD_PATH.test(key)) {
    throw err(
      `"${key.slice(0, 80)}" is not a valid field path: use segments of letters, digits, _ and - (starting with a letter or _, at most 64 characters each), joined by dots, at most 8 segments.`,
    );
  }
  return { kind: "field", path: key };
}

function checkMetaValue(target: Target, op: Operator, value: Json, key: string): Json {
  if (target.kind !== "meta") return value;
  const one = (v: Json): Json => {
    if (target.column === "id") {
      if (typeof v !== "string") throw invalid(`${key} ${op} takes record ids (strings).`);
      return v;
    }
    const ms = typeof v === "string" && /^\d{4}-\d\d-\d\dT/.test(v) ? Date.parse(v) : NaN;
    if (Number.isNaN(ms)) throw invalid(`${key} ${op} takes ISO 8601 timestamps such as "2026-01-15T12:00:00.000Z".`);
    return ms;
  };
  return op === "$in" ? (value as Json[]).map(one) : one(value);
}

function parseCondition(target: Target, key: string, op: string, value: Json): Condition {
  if (!OPERATORS.has(op)) {
    throw invalid(`unknown operator "${op.slice(0, 40)}" on "${key}". Supported: $eq, $ne, $gt, $gte, $lt, $lte, $in.`);
  }
  const operator = op as Operator;
  if (operator === "$in") {
    if (!Array.isArray(value)) throw invalid(`$in on "${key}" takes an array of values.`);
    if (value.length > FILTER_LIMITS.maxIn) throw invalid(`$in on "${key}" has ${value.length} values; the maximum is ${FILTER_LIMITS.maxIn}.`);
  } else if (operator !== "$eq" && operator !== "$ne" && value !== null && typeof value === "object") {
    throw invalid(`${operator} on "${key}" compares with a number, string, boolean or null, not an object or array.`);
  }
  return { target, op: operator, value: checkMetaValue(target, operator, value, key) };
}

/** Parses the `filter` query parameter. Absent or empty means "every record". */
export function parseFilter(raw: string | undefined): Condition[] {
  if (raw === undefined || raw.trim() === "") return [];
  const filter = parseJsonParam(raw, "filter", invalid) as Json;
  if (!isPlainObject(filter)) throw invalid(`filter must be a JSON object such as {"status":"open"}.`);
  if (depthOf(filter) > FILTER_LIMITS.maxDepth) throw invalid(`the filter is nested more than ${FILTER_LIMITS.maxDepth} levels deep.`);
  const conditions: Condition[] = [];
  for (const [key, spec] of Object.entries(filter)) {
    if (key === "$text") {
      conditions.push(parseText(spec as Json));
      continue;
    }
    const target = parseTarget(key, invalid);
    const ops = isPlainObject(spec) ? Object.keys(spec) : [];
    const operatorKeys = ops.filter((k) => k.startsWith("$"));
    if (operatorKeys.length > 0 && operatorKeys.length !== ops.length) {
      throw invalid(`"${key}" mixes operators and plain keys; use either {"$gte": 1} style operators or a plain value.`);
    }
    if (operatorKeys.length === 0) conditions.push(parseCondition(target, key, "$eq", spec as Json));
    else for (const op of ops) conditions.push(parseCondition(target, key, op, (spec as Record<string, Json>)[op]!));
    if (conditions.length > FILTER_LIMITS.maxClauses) throw invalid(`more than ${FILTER_LIMITS.maxClauses} conditions.`);
  }
  return conditions;
}

/** Parses the `sort` query parameter; absent means newest first. */
export function parseSort(raw: string | undefined): SortKey[] {
  if (raw === undefined || raw.trim() === "") return [{ target: { kind: "meta", column: "created_at" }, dir: -1 }];
  const sort = parseJsonParam(raw, "sort", invalidSort);
  if (!isPlainObject(sort)) throw invalidSort(`sort must be a JSON object such as {"priority":-1,"$createdAt":1}.`);
  const entries = Object.entries(sort);
  if (entries.length === 0) throw invalidSort("sort names no field.");
  if (entries.length > FILTER_LIMITS.maxSortKeys) throw invalidSort(`at most ${FILTER_LIMITS.maxSortKeys} sort keys.`);
  return entries.map(([key, dir]) => {
    if (dir !== 1 && dir !== -1) throw invalidSort(`"${key}" must be 1 (ascending) or -1 (descending).`);
    if (key === "$rank") return { target: { kind: "rank" }, dir };
    if (key.startsWith("$") && !Object.hasOwn(META_FIELDS, key)) {
      throw invalidSort(`"${key.slice(0, 40)}" is not supported. Sorts take data fields, the record's own $id, $createdAt and $updatedAt, and $rank (how well records match a $text search).`);
    }
    return { target: parseTarget(key, invalidSort), dir };
  });
}

/** `$rank` sorts by a `$text`'s match: without one in the filter there is nothing to rank. */
function checkRank(conditions: Condition[], sort: SortKey[]): void {
  if (isRanked(sort) && !conditions.some((c) => c.op === "$text")) {
    throw invalidSort('$rank orders records by how well they match the filter\'s $text search, and this filter has none: add one, e.g. filter={"$text":{"$search":"red shoes"}}&sort={"$rank":-1}.');
  }
}

/**
 * The data fields an index on which would serve this list: compared with an operator an
 * index can search ($ne cannot), or sorted on. Engine-neutral: each store decides what to
 * build for them (src/db/sqlite/record-auto-indexes.ts on SQLite).
 */
export function indexableFields(conditions: Condition[], sort: SortKey[]): string[] {
  const fields = new Set<string>();
  for (const c of conditions) if (c.target.kind === "field" && c.op !== "$ne" && c.op !== "$text") fields.add(c.target.path);
  for (const k of sort) if (k.target.kind === "field") fields.add(k.target.path);
  return [...fields];
}

/** A list's parsed filter and sort, shared by every request that sends the same text. */
export interface ParsedList {
  conditions: Condition[];
  sort: SortKey[];
}

function checked(conditions: Condition[], sort: SortKey[]): ParsedList {
  checkRank(conditions, sort);
  return { conditions, sort };
}

/** Distinct (filter, sort) texts remembered; past it the least recently used go. */
export const PARSED_LIST_CACHE_SIZE = 1000;
/** filter text → sort text → parsed; Map order is recency of use */
const parsedLists = new Map<string, Map<string, ParsedList>>();
let parsedCount = 0;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * parseFilter and parseSort, remembered by text: an app lists with a handful of filters, so
 * most requests send a text seen before. The result is frozen and the same object for the
 * same texts, which lets a store keep what it compiled from it (a prepared statement) by
 * identity. Invalid texts are not remembered; they throw every time.
 */
export function parseList(filter: string | undefined, sort: string | undefined): ParsedList {
  const f = filter ?? "";
  const s = sort ?? "";
  const known = parsedLists.get(f);
  const hit = known?.get(s);
  // Parsed before anything is stored: a text that throws leaves no entry behind.
  const parsed = hit ?? deepFreeze(checked(parseFilter(filter), parseSort(sort)));
  const bySort = known ?? new Map<string, ParsedList>();
  parsedLists.delete(f);
  parsedLists.set(f, bySort);
  if (hit) return hit;
  bySort.set(s, parsed);
  parsedCount++;
  while (parsedCount > PARSED_LIST_CACHE_SIZE) {
    const [oldest, entries] = parsedLists.entries().next().value!;
    parsedCount -= entries.size;
    parsedLists.delete(oldest);
  }
  return parsed;
}

/**
 * One term of a keyset (cursor) page's start: the order a list sorts by, term by term, with
 * the last record's value for each. The terms are the sort keys, then the tie-breaks the
 * stores add (creation time unless sorted on, then `seq`; none after `$id`, which is unique),
 * so "after the record" is exactly "past its place in the total order".
 */
export type KeyTerm = { target: Target; dir: 1 | -1; value: Json } | { target: { kind: "seq" }; dir: 1 | -1; value: number };

/** The targets of a list's total order, in order (see KeyTerm). */
export function keyTargets(sort: readonly SortKey[]): { target: Target | { kind: "seq" }; dir: 1 | -1 }[] {
  const terms: { target: Target | { kind: "seq" }; dir: 1 | -1 }[] = sort.map(({ target, dir }) => {
    if (target.kind === "rank") throw new Error("keyTargets: a ranked list's cursors are positions");
    return { target, dir };
  });
  const last = sort.at(-1)?.dir ?? -1;
  const sortsBy = (column: MetaColumn) => sort.some((k) => k.target.kind === "meta" && k.target.column === column);
  if (sortsBy("id")) return terms;
  if (!sortsBy("created_at")) terms.push({ target: { kind: "meta", column: "created_at" }, dir: last });
  terms.push({ target: { kind: "seq" }, dir: last });
  return terms;
}
