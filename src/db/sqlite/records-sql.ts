import { FIELD_PATH } from "../../apps/settings.ts";
import { isRanked, type Condition, type Json, type KeyTerm, type Operator, type SortKey, type Target, type TextCondition } from "../../data/query.ts";
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
 * JSON paths are bound as parameters. A list that narrows or sorts on a field with a complete
 * per-field index (record-field-index.ts) reads through it: the index's entries drive the
 * query (`e`, joined to the record `r` by seq), and that field's rank and value are the
 * entry's columns, equal by construction to the expressions over the record's data.
 */

export interface Fragment {
  sql: string;
  params: unknown[];
}

/** `a.b` → `$."a"."b"`. Segments match FIELD_PATH, so they never hold a quote. */
export function jsonPath(path: string): string {
  if (!FIELD_PATH.test(path)) throw new Error(`records-sql: refusing field path ${JSON.stringify(path)}`);
  return "$" + path.split(".").map((s) => `."${s}"`).join("");
}

export const rankSql = (p: string) =>
  `CASE json_type(data, ${p}) WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'true' THEN 6 WHEN 'false' THEN 6 ELSE 1 END`;
export const valueSql = (p: string) => `json_extract(data, ${p})`;

/** The per-field index a list reads through: its entries' `ix`, and the field. */
export interface Driver {
  ix: number;
  path: string;
}

/** The rank and value of a data field, as fragments: the driving index's columns, or over the record's data. */
function fieldExprs(path: string, driver: Driver | undefined): { rank: Fragment; value: Fragment } {
  if (driver?.path === path) return { rank: { sql: "e.rank", params: [] }, value: { sql: "e.value", params: [] } };
  const jp = jsonPath(path);
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

function fieldCondition(path: string, op: Operator, value: Json, driver: Driver | undefined): Fragment {
  const { rank, value: val } = fieldExprs(path, driver);
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
 * planner never matches them against a partial index's WHERE: after a schema change, SQLite
 * 3.53 plans a statement again with the values bound at that moment, may pick a partial
 * index of that collection (the per-field expression indexes of tenantd before schema 17
 * were such), and keeps the plan for every value bound later.
 */
export const BOUND_SCOPE = "tenant_id = ? AND app_id = CAST(? AS TEXT) AND collection = CAST(? AS TEXT)";

/**
 * The server's own predicate: tenant, app, collection. Through a driving index, its entries
 * of the tenant joined to their records; the record's own tenant is checked as well, so an
 * entry can never show another tenant's record.
 */
function scopeWhere(scope: RecordScope, driver: Driver | undefined): Fragment {
  const params = [scope.tenantId, scope.appId, scope.collection];
  if (!driver) return { sql: BOUND_SCOPE, params };
  if (!Number.isSafeInteger(driver.ix)) throw new Error(`records-sql: refusing index ${driver.ix}`);
  return { sql: `e.ix = ${driver.ix} AND e.rec_tenant = ? AND r.seq = e.rec_seq AND r.tenant_id = e.rec_tenant AND r.app_id = CAST(? AS TEXT) AND r.collection = CAST(? AS TEXT)`, params };
}

/**
 * What a list reads: the records, or a driving index's entries and then their records
 * (entries first, CROSS JOIN keeps that order). A ranked page (`ranked`) reads the full-text
 * index's matches and then their records: bm25() scores the rows of the FTS5 query that found
 * them, once per query (it counts each word's matches first), so that query must be the
 * page's own outer loop; as a subquery or an inner loop it would count again for every row.
 */
export const fromSql = (driver: Driver | undefined, ranked = false) =>
  ranked ? "records_fts CROSS JOIN records" : driver ? "record_field_entries AS e CROSS JOIN records AS r" : "records";

/**
 * With a `$text` and no driving index, the scope's columns are written `+column`, which no
 * index matches: the planner then starts from the full-text index's matches (looked up by
 * seq) instead of walking every record of the tenant and testing each against them, which
 * cost a search of one rare word 8 ms at 20,000 records (bench/data-issue44.mjs). Through a
 * driving index, its entries lead as they do without `$text`.
 */
const unindexed = (f: Fragment): Fragment => ({ sql: f.sql.replace(/\b(tenant_id|app_id|collection) = /g, "+$1 = "), params: f.params });

/** A record's own column in a list's SQL: `r.` when a driving index's entries are joined (`e`). */
const column = (name: string, driver: Driver | undefined) => (driver ? `r.${name}` : name);

/** The scope of a ranked page (fromSql): records_fts has app_id and collection columns too. */
const RANKED_SCOPE = "+records.tenant_id = ? AND +records.app_id = CAST(? AS TEXT) AND +records.collection = CAST(? AS TEXT)";

/** `ranked`: the WHERE of a ranked page (fromSql), which has no driving index. */
export function whereSql(scope: RecordScope, conditions: Condition[], driver?: Driver, ranked = false): Fragment {
  const scoped = scopeWhere(scope, driver);
  const parts = [
    ranked ? { sql: RANKED_SCOPE, params: scoped.params } : !driver && conditions.some((c) => c.op === "$text") ? unindexed(scoped) : scoped,
  ];
  for (const c of conditions) {
    if (c.op === "$text") parts.push(textCondition(c, scope, driver, ranked));
    else parts.push(c.target.kind === "meta" ? metaCondition(c.target.column, c.op, c.value) : fieldCondition(c.target.path, c.op, c.value, driver));
  }
  return join(parts, " AND ");
}

/**
 * What counts a list's matches. When every condition is on the driving index's field, its
 * entries alone answer (the index covers them) without reading each matching record; the
 * entries mirror the records (their triggers), so the count is the same.
 */
export function countSql(scope: RecordScope, conditions: Condition[], driver: Driver | undefined): { from: string; where: Fragment } {
  const own = driver && conditions.every((c) => c.target.kind === "field" && c.target.path === driver.path);
  if (!own) return { from: fromSql(driver), where: whereSql(scope, conditions, driver) };
  if (!Number.isSafeInteger(driver.ix)) throw new Error(`records-sql: refusing index ${driver.ix}`);
  const parts = [{ sql: `e.ix = ${driver.ix} AND e.rec_tenant = ?`, params: [scope.tenantId] as unknown[] }];
  for (const c of conditions) if (c.op !== "$text" && c.target.kind === "field") parts.push(fieldCondition(c.target.path, c.op, c.value, driver));
  return { from: "record_field_entries AS e", where: join(parts, " AND ") };
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

function sortTerms(key: SortKey, conditions: Condition[], driver: Driver | undefined, walk: boolean): Fragment[] {
  const dir = key.dir === 1 ? "ASC" : "DESC";
  const target = key.target;
  // bm25() is lower for a better match: -1 (best first) is ascending.
  if (target.kind === "rank") return [{ sql: `bm25(records_fts) ${key.dir === 1 ? "DESC" : "ASC"}`, params: [] }];
  if (target.kind === "meta") return [{ sql: `${walk && target.column === "created_at" ? "e.rec_created" : target.column} ${dir}`, params: [] }];
  const { rank, value } = fieldExprs(target.path, driver);
  const valueTerm = { sql: `${value.sql} ${dir}`, params: value.params };
  return rankPinned(conditions, target.path) ? [valueTerm] : [{ sql: `${rank.sql} ${dir}`, params: rank.params }, valueTerm];
}

const INDEXABLE = new Set<Condition["op"]>(["$eq", "$in", "$gt", "$gte", "$lt", "$lte"]);

/**
 * The complete per-field index a list reads through, if any: the first indexed field the
 * filter narrows (an index searches equality and ranges; $ne it cannot), or else the field
 * of a one-key sort, whose index yields the order.
 */
export function chooseDriver(ready: ReadonlyMap<string, number>, conditions: Condition[], sort: SortKey[]): Driver | undefined {
  // A ranked page reads the full-text index's matches first (fromSql).
  if (ready.size === 0 || isRanked(sort)) return undefined;
  for (const c of conditions) if (c.target.kind === "field" && INDEXABLE.has(c.op) && ready.has(c.target.path)) return { ix: ready.get(c.target.path)!, path: c.target.path };
  // With a $text, the full-text index's matches lead rather than an index walked for its order.
  const key = sort.length === 1 && !conditions.some((c) => c.op === "$text") ? sort[0]!.target : undefined;
  return key?.kind === "field" && ready.has(key.path) ? { ix: ready.get(key.path)!, path: key.path } : undefined;
}

/**
 * Whether the driving index yields the order asked, so the first page reads a page of
 * entries: a one-key sort on the field (its entries are ordered by rank, value, creation,
 * seq), or by creation under an equality on the field. Otherwise the matches are sorted.
 */
function walkable(driver: Driver, conditions: Condition[], sort: SortKey[]): boolean {
  if (sort.length !== 1) return false;
  const key = sort[0]!.target;
  if (key.kind === "rank") return false;
  if (key.kind === "field") return key.path === driver.path;
  return key.column === "created_at" && conditions.some((c) => c.target.kind === "field" && c.target.path === driver.path && c.op === "$eq" && c.value !== null);
}

/**
 * ORDER BY with a final tie-break on creation time, then `seq` (creation order), in the
 * last key's direction: the order is total, so pages tile the result. Walking a driving
 * index, creation and seq are its entries' copies, so SQLite sees the index's own order.
 * Through a driving index that does not yield the order, the terms are written as `+expr`,
 * which no index matches: SQLite sorts the matches rather than walk some other index in
 * order through every row of the tenant (slow exactly on skewed data, performance.md).
 */
export function orderSql(conditions: Condition[], sort: SortKey[], driver?: Driver): Fragment {
  const walk = driver !== undefined && walkable(driver, conditions, sort);
  const terms = sort.flatMap((k) => sortTerms(k, conditions, driver, walk));
  const last = sort.at(-1)?.dir === 1 ? "ASC" : "DESC";
  const sortsBy = (column: string) => sort.some((k) => k.target.kind === "meta" && k.target.column === column);
  if (!sortsBy("id")) {
    if (!sortsBy("created_at")) terms.push({ sql: `${walk ? "e.rec_created" : "created_at"} ${last}`, params: [] });
    terms.push({ sql: `${walk ? "e.rec_seq" : "seq"} ${last}`, params: [] });
  }
  const plus = driver && !walk ? "+" : "";
  return join(terms.map((t) => ({ sql: plus + t.sql, params: t.params })), ", ");
}

/**
 * "Past this place in the order" for a cursor page (query.ts KeyTerm): for terms t1..tn, the
 * rows where some ti is past its value and every term before it equals its value. A field's
 * term compares its rank first, then its value, as orderSql sorts; a missing or null value
 * (rank 1) has nothing past it within its rank. Terms of the record's own columns, in one
 * direction, are written as one row-value comparison, which SQLite walks as an index range.
 */
export function afterSql(terms: readonly KeyTerm[], driver?: Driver): Fragment {
  if (terms.every((t) => t.target.kind !== "field" && t.dir === terms[0]!.dir)) {
    const columns = terms.map((t) => column(t.target.kind === "meta" ? t.target.column : "seq", driver));
    return { sql: `(${columns.join(", ")}) ${terms[0]!.dir === 1 ? ">" : "<"} (${columns.map(() => "?").join(", ")})`, params: terms.map((t) => t.value) };
  }
  const parts = terms.map((t) => keyTerm(t, driver));
  const ors: Fragment[] = parts.map((part, i) => {
    const all = join([...parts.slice(0, i).map((p) => p.eq), part.past], " AND ");
    return { sql: `(${all.sql})`, params: all.params };
  });
  const any = join(ors, " OR ");
  return { sql: `(${any.sql})`, params: any.params };
}

function keyTerm(t: KeyTerm, driver: Driver | undefined): { eq: Fragment; past: Fragment } {
  const op = t.dir === 1 ? ">" : "<";
  if (t.target.kind !== "field") {
    const name = column(t.target.kind === "meta" ? t.target.column : "seq", driver);
    return { eq: { sql: `${name} = ?`, params: [t.value] }, past: { sql: `${name} ${op} ?`, params: [t.value] } };
  }
  const v = t.value as Json;
  const { rank, value } = fieldExprs(t.target.path, driver);
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
 * `fields`, each term must also be among the words of one of those fields. On a ranked page
 * the full-text index's rows are the page's own (fromSql), joined to their records.
 */
function textCondition(c: TextCondition, scope: RecordScope, driver: Driver | undefined, ranked: boolean): Fragment {
  const terms = searchTerms(c.value.search, scope.search ?? "simple");
  const parts: Fragment[] = [{ sql: "records_fts MATCH ?", params: [ftsQuery(terms)] }];
  if (c.value.fields.length > 0) {
    for (const t of terms) {
      const any = join(
        c.value.fields.map((f) => ({ sql: `(' ' || COALESCE(json_extract(records_fts.fields, ?), '') || ' ') LIKE ?`, params: [`$."${f}"`, fieldWordPattern(t)] })),
        " OR ",
      );
      parts.push({ sql: `(${any.sql})`, params: any.params });
    }
  }
  const all = join(parts, " AND ");
  if (ranked) return { sql: `${all.sql} AND records.seq = records_fts.rowid`, params: all.params };
  return { sql: `${column("seq", driver)} IN (SELECT rowid FROM records_fts WHERE ${all.sql})`, params: all.params };
}
