import { COLLECTION_NAME, FIELD_PATH } from "../../apps/settings.ts";
import type { Condition, Json, KeyTerm, Operator, SortKey, TextCondition } from "../../data/query.ts";
import { searchTerms, type SearchTerm } from "../../data/text.ts";
import type { RecordScope } from "../types.ts";

/**
 * Compiles parsed filters and sorts (src/data/query.ts) to PostgreSQL over `records`, with
 * the semantics of the SQLite compiler (src/db/sqlite/records-sql.ts), checked by a differential
 * test on random filters:
 *
 * - a type rank per value in MongoDB's order: 1 null or missing, 2 number, 3 string,
 *   4 object, 5 array, 6 boolean; values of different ranks never compare equal or in range;
 * - per rank a typed value that is NULL for every other type: a number as numeric, a string
 *   in byte order (COLLATE "C", SQLite's BINARY), a boolean, and an object or array as its
 *   JSON text as written (what SQLite's json_extract compares), read from `data`, the text
 *   column, since jsonb reorders keys;
 * - sorts by rank, then the typed values, then created_at and seq: a total order.
 *
 * Paths are written into the SQL text (a FIELD_PATH, checked again here, cannot hold a
 * quote), so the same expressions appear in queries and in the per-field expression
 * indexes; the app id and collection are literals when an index may serve, as the partial
 * indexes' predicates must be provable when the statement is planned.
 */

export interface PgFragment {
  sql: string;
  params: unknown[];
}

const APP_ID = /^[A-Za-z0-9_]{1,64}$/;

export function literal(text: string, pattern: RegExp): string {
  if (!pattern.test(text)) throw new Error(`postgres records: refusing literal ${JSON.stringify(text)}`);
  return `'${text}'`;
}

/**
 * `a.b` → `'{a,b}'`, a text[] literal for the #> operator. A bare element spelling NULL (any
 * case) would be a SQL NULL, which matches nothing: it is quoted, `'{a,"NULL"}'`. FIELD_PATH
 * leaves no other character the array syntax reads. The rest stay bare: index names hash
 * this text, and a changed one would rebuild every index at the next start.
 */
export function pathLiteral(path: string): string {
  if (!FIELD_PATH.test(path)) throw new Error(`postgres records: refusing field path ${JSON.stringify(path)}`);
  return `'{${path.split(".").map((key) => (key.toLowerCase() === "null" ? `"${key}"` : key)).join(",")}}'`;
}

/** The expressions of one data field; the index of the field is built from the same text. */
export function fieldExprs(path: string) {
  const p = pathLiteral(path);
  const j = `(doc #> ${p})`;
  return {
    rank: `(CASE jsonb_typeof${j} WHEN 'number' THEN 2 WHEN 'string' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'boolean' THEN 6 ELSE 1 END)`,
    num: `(CASE WHEN jsonb_typeof${j} = 'number' THEN ${j}::numeric END)`,
    str: `((CASE WHEN jsonb_typeof${j} = 'string' THEN ${j} #>> '{}' END) COLLATE "C")`,
    bool: `(CASE WHEN jsonb_typeof${j} = 'boolean' THEN ${j}::boolean END)`,
    // Only for the rare object or array value: reparses the text to keep its key order.
    text: `((CASE WHEN jsonb_typeof${j} IN ('object', 'array') THEN (data::json #> ${p})::text END) COLLATE "C")`,
  };
}

/** The order of a field's sort terms; its expression index has the same columns in the same order. */
export const fieldSortExprs = (e: ReturnType<typeof fieldExprs>) => [e.rank, e.num, e.str, e.bool, e.text];

export function rankOf(v: Json): number {
  if (v === null) return 1;
  if (typeof v === "number") return 2;
  if (typeof v === "string") return 3;
  if (typeof v === "boolean") return 6;
  return Array.isArray(v) ? 5 : 4;
}

const FALSE: PgFragment = { sql: "FALSE", params: [] };
const SQL_OPS = { $eq: "=", $ne: "<>", $gt: ">", $gte: ">=", $lt: "<", $lte: "<=" } as const;

/** Builds fragments whose `$n` placeholders are numbered in order of appearance. */
class Params {
  readonly values: unknown[] = [];
  add(v: unknown, cast: string): string {
    this.values.push(v);
    return `$${this.values.length}::${cast}`;
  }
}

/** The typed value expression and bound parameter for comparing with a scalar or JSON value. */
function typed(e: ReturnType<typeof fieldExprs>, v: Exclude<Json, null>, p: Params): [string, string] {
  if (typeof v === "number") return [e.num, p.add(v, "numeric")];
  if (typeof v === "string") return [e.str, `${p.add(v, "text")} COLLATE "C"`];
  if (typeof v === "boolean") return [e.bool, p.add(v, "boolean")];
  return [e.text, `${p.add(JSON.stringify(v), "text")} COLLATE "C"`];
}

function fieldCondition(path: string, op: Operator, value: Json, p: Params): string {
  const e = fieldExprs(path);
  const rankIs = (r: number) => `${e.rank} = ${r}`;
  // The rank term is redundant for the typed value (NULL for other types) but lets a
  // per-field index (tenant, rank, value) narrow on both columns.
  const compare = (sqlOp: string, v: Json) => {
    if (v === null) return rankIs(1);
    const [expr, param] = typed(e, v, p);
    return `(${rankIs(rankOf(v))} AND ${expr} ${sqlOp} ${param})`;
  };
  switch (op) {
    case "$eq":
      return compare("=", value);
    case "$ne":
      return `(${compare("=", value)}) IS NOT TRUE`;
    case "$gt":
    case "$lt":
      return value === null ? FALSE.sql : compare(SQL_OPS[op], value);
    case "$gte":
    case "$lte":
      return compare(SQL_OPS[op], value);
    case "$in": {
      const values = value as Json[];
      if (values.length === 0) return FALSE.sql;
      const parts: string[] = [];
      if (values.some((v) => v === null)) parts.push(rankIs(1));
      const byRank = new Map<number, Json[]>();
      for (const v of values) {
        if (v === null) continue;
        if (typeof v === "object") parts.push(compare("=", v));
        else byRank.set(rankOf(v), [...(byRank.get(rankOf(v)) ?? []), v]);
      }
      for (const [r, vs] of byRank) {
        const [expr] = typed(e, vs[0] as Exclude<Json, null>, new Params());
        const list = vs.map((v) => typed(e, v as Exclude<Json, null>, p)[1]);
        parts.push(`(${rankIs(r)} AND ${expr} IN (${list.join(", ")}))`);
      }
      return `(${parts.join(" OR ")})`;
    }
  }
}

function metaCondition(column: string, op: Operator, value: Json, p: Params): string {
  const col = column === "id" ? `id COLLATE "C"` : column;
  const cast = column === "id" ? "text" : "bigint";
  if (op === "$in") {
    const values = value as Json[];
    if (values.length === 0) return FALSE.sql;
    return `${col} IN (${values.map((v) => p.add(v, cast)).join(", ")})`;
  }
  return `${col} ${SQL_OPS[op]} ${p.add(value, cast)}`;
}

/** The server's own predicate. Literal app and collection when an index may serve. */
function scopeWhere(scope: RecordScope, p: Params): string {
  const tenant = `tenant_id = ${p.add(scope.tenantId, "text")}`;
  if (scope.indexed.size === 0) return `app_id = ${p.add(scope.appId, "text")} AND ${tenant} AND collection = ${p.add(scope.collection, "text")}`;
  return `app_id = ${literal(scope.appId, APP_ID)} AND ${tenant} AND collection = ${literal(scope.collection, COLLECTION_NAME)}`;
}

export function whereSql(scope: RecordScope, conditions: Condition[], p: Params = new Params()): PgFragment {
  const parts = [scopeWhere(scope, p)];
  for (const c of conditions) {
    if (c.op === "$text") parts.push(textCondition(c, scope, p));
    else parts.push(c.target.kind === "meta" ? metaCondition(c.target.column, c.op, c.value, p) : fieldCondition(c.target.path, c.op, c.value, p));
  }
  return { sql: parts.join(" AND "), params: p.values };
}

/**
 * The indexed field an equality condition pins to one value, when the sort is by creation
 * time (the default): every match then has the same rank and typed values, so
 * ordering by them first changes nothing, and lets the field's index, whose columns they
 * are, return the matches already in creation order (no sort of every match for one page).
 */
export function pinnedField(scope: RecordScope, conditions: Condition[], sort: SortKey[]): string | undefined {
  if (sort.some((k) => k.target.kind === "field" || k.target.column !== "created_at")) return undefined;
  for (const c of conditions) if (c.op === "$eq" && c.target.kind === "field" && scope.indexed.has(c.target.path)) return c.target.path;
  return undefined;
}

/** ORDER BY with the tie-breaks SQLite uses: creation time, then `seq`, in the last key's direction. */
export function orderSql(sort: SortKey[], pinned?: string): string {
  const terms: string[] = [];
  if (pinned !== undefined) {
    const dir = sort.at(-1)?.dir === 1 ? "ASC" : "DESC";
    for (const expr of fieldSortExprs(fieldExprs(pinned))) terms.push(`${expr} ${dir}`);
  }
  for (const key of sort) {
    const dir = key.dir === 1 ? "ASC" : "DESC";
    if (key.target.kind === "meta") {
      terms.push(`${key.target.column === "id" ? `id COLLATE "C"` : key.target.column} ${dir}`);
      continue;
    }
    const e = fieldExprs(key.target.path);
    for (const expr of fieldSortExprs(e)) terms.push(`${expr} ${dir}`);
  }
  const last = sort.at(-1)?.dir === 1 ? "ASC" : "DESC";
  const sortsBy = (column: string) => sort.some((k) => k.target.kind === "meta" && k.target.column === column);
  if (!sortsBy("id")) {
    if (!sortsBy("created_at")) terms.push(`created_at ${last}`);
    terms.push(`seq ${last}`);
  }
  return terms.join(", ");
}

/**
 * "Past this place in the order" for a cursor page, as the SQLite compiler writes it
 * (src/db/sqlite/records-sql.ts afterSql): some term past its value, every term before it
 * equal. A field compares its rank, then its typed value (NULL for the other ranks, so equal
 * ranks leave one typed column to compare); a null or missing value has nothing past it
 * within rank 1. The record's own columns in one direction are one row comparison, which
 * PostgreSQL walks as a range of records_list.
 */
export function afterSql(terms: readonly KeyTerm[], p: Params): string {
  const column = (t: KeyTerm) => (t.target.kind === "meta" ? (t.target.column === "id" ? `id COLLATE "C"` : t.target.column) : "seq");
  const param = (t: KeyTerm) => (t.target.kind === "meta" && t.target.column === "id" ? `${p.add(t.value, "text")} COLLATE "C"` : p.add(t.value, "bigint"));
  if (terms.every((t) => t.target.kind !== "field" && t.dir === terms[0]!.dir)) {
    return `(${terms.map(column).join(", ")}) ${terms[0]!.dir === 1 ? ">" : "<"} (${terms.map(param).join(", ")})`;
  }
  const parts = terms.map((t) => {
    const op = t.dir === 1 ? ">" : "<";
    if (t.target.kind !== "field") {
      const v = param(t);
      return { eq: `${column(t)} = ${v}`, past: `${column(t)} ${op} ${v}` };
    }
    const e = fieldExprs(t.target.path);
    const v = t.value as Json;
    const r = rankOf(v);
    if (v === null) return { eq: `${e.rank} = 1`, past: `${e.rank} ${op} 1` };
    const [expr, bound] = typed(e, v, p);
    return { eq: `(${e.rank} = ${r} AND ${expr} = ${bound})`, past: `(${e.rank} ${op} ${r} OR (${e.rank} = ${r} AND ${expr} ${op} ${bound}))` };
  });
  return `(${parts.map((part, i) => `(${[...parts.slice(0, i).map((q) => q.eq), part.past].join(" AND ")})`).join(" OR ")})`;
}

/** A tsquery of search terms, in tsquery's own input syntax (no parser, no dictionary): every word quoted, a prefix with `:*`. */
export const tsQuery = (terms: readonly SearchTerm[]) => terms.map((t) => `'${t.word}'${t.prefix ? ":*" : ""}`).join(" & ");

/** `$text` as SQLite's textCondition (src/db/sqlite/records-sql.ts), over record_search. */
function textCondition(c: TextCondition, scope: RecordScope, p: Params): string {
  const terms = searchTerms(c.value.search, scope.search ?? "simple");
  const parts = [`tsv @@ ${p.add(tsQuery(terms), "tsquery")}`];
  if (c.value.fields.length > 0) {
    for (const t of terms) {
      const pattern = `% ${t.word}${t.prefix ? "" : " "}%`;
      parts.push(`(${c.value.fields.map((f) => `(' ' || COALESCE(fields ->> ${p.add(f, "text")}, '') || ' ') LIKE ${p.add(pattern, "text")}`).join(" OR ")})`);
    }
  }
  return `seq IN (SELECT seq FROM record_search WHERE ${parts.join(" AND ")})`;
}

export { Params };
