import { COLLECTION_NAME, FIELD_PATH } from "../../apps/settings.ts";
import type { Condition, Json, KeyTerm, Operator, SortKey, Target, TextCondition } from "../../data/query.ts";
import { searchTerms, type SearchTerm } from "../../data/text.ts";
import type { RecordScope } from "../types.ts";

/**
 * Compiles parsed filters and sorts (src/data/query.ts) to SQL over `records`.
 *
 * Type-exact MongoDB semantics come from a type rank per value, in MongoDB's sort order:
 * 1 null or missing, 2 number, 3 string, 4 object, 5 array, 6 boolean. A condition is
 * "same rank AND same SQLite value", so 1 never equals "1" or true, and ranges never
 * cross types. The rank expression is also the second-to-last column of every per-field
 * index, so typed filters and sorts on indexed fields walk the index.
 *
 * JSON paths are bound as parameters, except for the app's indexed fields: an expression
 * index only matches a query that repeats its expression literally, so those paths (checked
 * against FIELD_PATH again right here) are written into the SQL text, as are the app id and
 * collection that pin the partial index.
 */

export interface Fragment {
  sql: string;
  params: unknown[];
}

export const APP_ID = /^[A-Za-z0-9_]{1,64}$/;
/** What jsonPath() yields for a FIELD_PATH: safe inside an SQL string literal. */
export const JSON_PATH_TEXT = /^[$A-Za-z0-9_."-]+$/;

/** `a.b` → `$."a"."b"`. Segments match FIELD_PATH, so they never hold a quote. */
export function jsonPath(path: string): string {
  if (!FIELD_PATH.test(path)) throw new Error(`records-sql: refusing field path ${JSON.stringify(path)}`);
  return "$" + path.split(".").map((s) => `."${s}"`).join("");
}

export function literal(text: string, pattern: RegExp): string {
  if (!pattern.test(text)) throw new Error(`records-sql: refusing literal ${JSON.stringify(text)}`);
  return `'${text}'`;
}

export const rankSql = (p: string) =>
  `CASE json_type(data, ${p}) WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'true' THEN 6 WHEN 'false' THEN 6 ELSE 1 END`;
export const valueSql = (p: string) => `json_extract(data, ${p})`;

/** The rank and value expressions of a data field, as fragments (the path bound or literal). */
function fieldExprs(path: string, scope: RecordScope): { rank: Fragment; value: Fragment } {
  const jp = jsonPath(path);
  if (scope.indexed.has(path)) {
    const lit = literal(jp, JSON_PATH_TEXT);
    return { rank: { sql: rankSql(lit), params: [] }, value: { sql: valueSql(lit), params: [] } };
  }
  return { rank: { sql: rankSql("?"), params: [jp] }, value: { sql: valueSql("?"), params: [jp] } };
}

function rankOf(v: Json): number {
  if (v === null) return 1;
  if (typeof v === "number") return 2;
  if (typeof v === "string") return 3;
  if (typeof v === "boolean") return 6;
  return Array.isArray(v) ? 5 : 4;
}

/** The SQL placeholder and bound value for a JSON value compared with json_extract(). */
function bind(v: Json): { sql: string; param: unknown } {
  if (typeof v === "boolean") return { sql: "?", param: v ? 1 : 0 };
  if (v !== null && typeof v === "object") return { sql: "json(?)", param: JSON.stringify(v) };
  return { sql: "?", param: v };
}

const FALSE: Fragment = { sql: "0", params: [] };

function join(parts: Fragment[], sep: string): Fragment {
  return { sql: parts.map((p) => p.sql).join(sep), params: parts.flatMap((p) => p.params) };
}

function fieldCondition(path: string, op: Operator, value: Json, scope: RecordScope): Fragment {
  const { rank, value: val } = fieldExprs(path, scope);
  const rankIs = (r: number): Fragment => ({ sql: `${rank.sql} = ${r}`, params: rank.params });
  // The value test comes before the rank test: SQLite evaluates the terms a scan checks in
  // the order written, and the value test alone turns away most rows of a selective filter,
  // so the rank's json_type runs only on the rows whose value matched (an index on the field
  // matches both terms whatever their order).
  const compare = (sqlOp: string, v: Json): Fragment => {
    if (v === null) return rankIs(1);
    const b = bind(v);
    return { sql: `(${val.sql} ${sqlOp} ${b.sql} AND ${rank.sql} = ${rankOf(v)})`, params: [...val.params, b.param, ...rank.params] };
  };
  switch (op) {
    case "$eq":
      return compare("=", value);
    case "$ne": {
      const eq = compare("=", value);
      return { sql: `NOT (${eq.sql})`, params: eq.params };
    }
    case "$gt":
    case "$lt":
      return value === null ? FALSE : compare(op === "$gt" ? ">" : "<", value);
    case "$gte":
    case "$lte":
      return compare(op === "$gte" ? ">=" : "<=", value);
    case "$in": {
      const values = value as Json[];
      if (values.length === 0) return FALSE;
      const parts: Fragment[] = [];
      if (values.some((v) => v === null)) parts.push(rankIs(1));
      // Scalars of one type share one IN list; objects and arrays compare one by one.
      const byRank = new Map<number, Json[]>();
      for (const v of values) {
        if (v === null) continue;
        if (typeof v === "object") parts.push(compare("=", v));
        else byRank.set(rankOf(v), [...(byRank.get(rankOf(v)) ?? []), v]);
      }
      for (const [r, vs] of byRank) {
        const bs = vs.map(bind);
        parts.push({
          sql: `(${val.sql} IN (${bs.map((b) => b.sql).join(", ")}) AND ${rank.sql} = ${r})`,
          params: [...val.params, ...bs.map((b) => b.param), ...rank.params],
        });
      }
      const all = join(parts, " OR ");
      return { sql: `(${all.sql})`, params: all.params };
    }
  }
}

const SQL_OPS = { $eq: "=", $ne: "!=", $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" } as const;

function metaCondition(column: string, op: Operator, value: Json): Fragment {
  if (op === "$in") {
    const values = value as Json[];
    if (values.length === 0) return FALSE;
    return { sql: `${column} IN (${values.map(() => "?").join(", ")})`, params: values };
  }
  return { sql: `${column} ${SQL_OPS[op]} ?`, params: [value] };
}

/** Where whereSql's fragment binds the tenant: first, so a compiled list serves every tenant by swapping it. */
export const TENANT_PARAM = 0;

/**
 * Tenant, app and collection, bound. App and collection go through CAST so that SQLite's
 * planner never matches them against a per-field index's WHERE (record-indexes.ts): after a
 * schema change, SQLite 3.53 plans a statement again with the values bound at that moment,
 * may pick that collection's partial index, and keeps the plan for every value bound later,
 * so the same statement then answers nothing for any other collection
 * (test/data-auto-indexes.test.ts). The plan stays a search of records_list.
 */
export const BOUND_SCOPE = "tenant_id = ? AND app_id = CAST(? AS TEXT) AND collection = CAST(? AS TEXT)";

/** The server's own predicate: tenant, app, collection. Literal when a partial index may serve. */
export function scopeWhere(scope: RecordScope): Fragment {
  if (scope.indexed.size === 0) return { sql: BOUND_SCOPE, params: [scope.tenantId, scope.appId, scope.collection] };
  return {
    sql: `tenant_id = ? AND app_id = ${literal(scope.appId, APP_ID)} AND collection = ${literal(scope.collection, COLLECTION_NAME)}`,
    params: [scope.tenantId],
  };
}

/**
 * With a `$text`, the scope's columns are written `+column`, which no index matches: the
 * planner then starts from the full-text index's matches (looked up by seq) instead of
 * walking every record of the tenant and testing each against them, which cost a search of
 * one rare word 8 ms at 20,000 records (bench/data-issue44.mjs).
 */
const unindexed = (f: Fragment): Fragment => ({ sql: f.sql.replace(/\b(tenant_id|app_id|collection) = /g, "+$1 = "), params: f.params });

export function whereSql(scope: RecordScope, conditions: Condition[]): Fragment {
  const parts = [conditions.some((c) => c.op === "$text") ? unindexed(scopeWhere(scope)) : scopeWhere(scope)];
  for (const c of conditions) {
    if (c.op === "$text") parts.push(textCondition(c, scope));
    else parts.push(c.target.kind === "meta" ? metaCondition(c.target.column, c.op, c.value) : fieldCondition(c.target.path, c.op, c.value, scope));
  }
  return join(parts, " AND ");
}

/**
 * Whether the filter lets only one type of value through for `path`. Then the rank term
 * is the same for every row and is left out of ORDER BY: SQLite does not see on its own
 * that an expression pinned by equality is constant, and would sort instead of walking
 * the index.
 */
function rankPinned(conditions: Condition[], path: string): boolean {
  return conditions.some((c) => {
    if (c.target.kind !== "field" || c.target.path !== path || c.op === "$ne") return false;
    if (c.op !== "$in") return true;
    const values = c.value as Json[];
    return values.length > 0 && values.every((v) => rankOf(v) === rankOf(values[0]!));
  });
}

function sortTerms(key: SortKey, conditions: Condition[], scope: RecordScope): Fragment[] {
  const dir = key.dir === 1 ? "ASC" : "DESC";
  const target = key.target;
  if (target.kind === "meta") return [{ sql: `${target.column} ${dir}`, params: [] }];
  const { rank, value } = fieldExprs(target.path, scope);
  const valueTerm = { sql: `${value.sql} ${dir}`, params: value.params };
  return rankPinned(conditions, target.path) ? [valueTerm] : [{ sql: `${rank.sql} ${dir}`, params: rank.params }, valueTerm];
}

const INDEXABLE = new Set<Operator>(["$eq", "$in", "$gt", "$gte", "$lt", "$lte"]);

/**
 * Whether the planner may satisfy ORDER BY from an index. When the filter narrows an
 * indexed field but the order is not one that field's index yields, an index walked in
 * ORDER BY order (newest first) would wade through every non-matching row of the tenant,
 * which is slow exactly on skewed data (PERFORMANCE.md). Then the sort terms are written
 * as `+expr`, which no index matches: the planner picks the field index and sorts the
 * matches instead.
 */
function orderFromIndex(scope: RecordScope, conditions: Condition[], sort: SortKey[]): boolean {
  const narrowing = conditions.filter((c) => c.target.kind === "field" && scope.indexed.has(c.target.path) && c.op !== "$text" && INDEXABLE.has(c.op));
  if (narrowing.length === 0 || sort.length !== 1) return narrowing.length === 0;
  const key = sort[0]!.target;
  // A range or equality on the sorted field: its index serves both.
  if (key.kind === "field") return narrowing.some((c) => c.target.kind === "field" && c.target.path === key.path);
  // Equality on an indexed field, sorted by creation: the index ends with created_at.
  return key.column === "created_at" && narrowing.some((c) => c.op === "$eq" && c.value !== null);
}

/**
 * ORDER BY with a final tie-break on creation time, then `seq` (creation order), in the
 * last key's direction: the order is total, so pages tile the result.
 */
export function orderSql(scope: RecordScope, conditions: Condition[], sort: SortKey[]): Fragment {
  const terms = sort.flatMap((k) => sortTerms(k, conditions, scope));
  const last = sort.at(-1)?.dir === 1 ? "ASC" : "DESC";
  const sortsBy = (column: string) => sort.some((k) => k.target.kind === "meta" && k.target.column === column);
  if (!sortsBy("id")) {
    if (!sortsBy("created_at")) terms.push({ sql: `created_at ${last}`, params: [] });
    terms.push({ sql: `seq ${last}`, params: [] });
  }
  const plus = orderFromIndex(scope, conditions, sort) ? "" : "+";
  return join(terms.map((t) => ({ sql: plus + t.sql, params: t.params })), ", ");
}


/**
 * "Past this place in the order" for a cursor page (query.ts KeyTerm): for terms t1..tn, the
 * rows where some ti is past its value and every term before it equals its value. A field's
 * term compares its rank first, then its value, as orderSql sorts; a missing or null value
 * (rank 1) has nothing past it within its rank. Terms of the record's own columns, in one
 * direction, are written as one row-value comparison, which SQLite walks as an index range.
 */
export function afterSql(scope: RecordScope, terms: readonly KeyTerm[]): Fragment {
  if (terms.every((t) => t.target.kind !== "field" && t.dir === terms[0]!.dir)) {
    const columns = terms.map((t) => (t.target.kind === "meta" ? t.target.column : "seq"));
    return { sql: `(${columns.join(", ")}) ${terms[0]!.dir === 1 ? ">" : "<"} (${columns.map(() => "?").join(", ")})`, params: terms.map((t) => t.value) };
  }
  const parts = terms.map((t) => keyTerm(scope, t));
  const ors: Fragment[] = parts.map((part, i) => {
    const all = join([...parts.slice(0, i).map((p) => p.eq), part.past], " AND ");
    return { sql: `(${all.sql})`, params: all.params };
  });
  const any = join(ors, " OR ");
  return { sql: `(${any.sql})`, params: any.params };
}

function keyTerm(scope: RecordScope, t: KeyTerm): { eq: Fragment; past: Fragment } {
  const op = t.dir === 1 ? ">" : "<";
  if (t.target.kind !== "field") {
    const column = t.target.kind === "meta" ? t.target.column : "seq";
    return { eq: { sql: `${column} = ?`, params: [t.value] }, past: { sql: `${column} ${op} ?`, params: [t.value] } };
  }
  const v = t.value as Json;
  const { rank, value } = fieldExprs(t.target.path, scope);
  const r = rankOf(v);
  const rankPast: Fragment = { sql: `${rank.sql} ${op} ${r}`, params: rank.params };
  if (v === null) return { eq: { sql: `${rank.sql} = 1`, params: rank.params }, past: rankPast };
  const b = bind(v);
  const eq: Fragment = { sql: `(${value.sql} = ${b.sql} AND ${rank.sql} = ${r})`, params: [...value.params, b.param, ...rank.params] };
  const past: Fragment = {
    sql: `(${rankPast.sql} OR (${rank.sql} = ${r} AND ${value.sql} ${op} ${b.sql}))`,
    params: [...rankPast.params, ...rank.params, ...value.params, b.param],
  };
  return { eq, past };
}

/** FTS5's query for search terms: every word, quoted; a prefix with `*`. */
export const ftsQuery = (terms: readonly SearchTerm[]) => terms.map((t) => `"${t.word}"${t.prefix ? "*" : ""}`).join(" AND ");

/** A LIKE pattern finding a word among a field's space-separated words (words are letters and digits: no wildcard in them). */
export const fieldWordPattern = (t: SearchTerm) => `% ${t.word}${t.prefix ? "" : " "}%`;

/**
 * `$text`: the records whose words (records_fts, rowid = seq) hold every term; with
 * `fields`, each term must also be among the words of one of those fields.
 */
function textCondition(c: TextCondition, scope: RecordScope): Fragment {
  const terms = searchTerms(c.value.search, scope.search ?? "simple");
  const parts: Fragment[] = [{ sql: "records_fts MATCH ?", params: [ftsQuery(terms)] }];
  if (c.value.fields.length > 0) {
    for (const t of terms) {
      const any = join(
        c.value.fields.map((f) => ({ sql: `(' ' || COALESCE(json_extract(fields, ?), '') || ' ') LIKE ?`, params: [`$."${f}"`, fieldWordPattern(t)] })),
        " OR ",
      );
      parts.push({ sql: `(${any.sql})`, params: any.params });
    }
  }
  const all = join(parts, " AND ");
  return { sql: `seq IN (SELECT rowid FROM records_fts WHERE ${all.sql})`, params: all.params };
}
