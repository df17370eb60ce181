import postgres from "postgres";
import { migrate } from "../postgres/migrations.ts";
import type { PgSql } from "../postgres/connection.ts";
import { deferredColumns, type CopyEnd } from "./end.ts";
import type { ColumnKind, CopyTable, CopyValue } from "./tables.ts";

const orderOf = (table: CopyTable) => (table.engineOrder ? [table.engineOrder.postgres] : table.key);
const list = (columns: string[]) => columns.map((c) => `"${c}"`).join(", ");
const params = (from: number, n: number) => Array.from({ length: n }, (_, i) => `$${from + i}`).join(", ");
// Every array goes over the wire as text[] and is cast on the server: the driver's own
// element serializers would otherwise apply (its bool[] one reads only a JS `true` as true).
const ARRAY_TYPE: Record<ColumnKind, string> = { text: "text[]", int: "text[]::int8[]", bool: "text[]::bool[]" };

/** int4 columns come back as numbers, int8 as bigint (postgres.BigInt): both as bigint here. */
function fromPg(table: CopyTable, columns: string[], row: unknown[]): CopyValue[] {
  return columns.map((c, i) => {
    const v = row[i];
    if (v === null || v === undefined) return null;
    if (table.columns[c] === "int") return typeof v === "bigint" ? v : BigInt(v as number | string);
    return v as CopyValue;
  });
}

/**
 * One array per column, for `unnest`, every element as text: integers as decimal (exact at
 * any size), booleans as t/f, read by the `::text[]::int8[]` (…) casts in the statement.
 */
const asText = (v: CopyValue) => (v === null ? null : typeof v === "boolean" ? (v ? "t" : "f") : String(v));
function toColumns(rows: CopyValue[][], width: number, skip: Set<number> = new Set()): (string | null)[][] {
  const out = Array.from({ length: width }, () => [] as (string | null)[]);
  for (const row of rows) for (let i = 0; i < width; i++) out[i]!.push(skip.has(i) ? null : asText(row[i]!));
  return out;
}

/**
 * A PostgreSQL database as one end of a copy, on a pool of its own: integers as bigint, no
 * column renaming (the repositories' connection camelCases). As the source it reads on one
 * reserved connection inside a REPEATABLE READ READ ONLY transaction: one snapshot throughout.
 * A batch of inserts is one statement over `unnest` of one array per column.
 */
export async function openPostgresCopyEnd(url: string, label: string): Promise<CopyEnd> {
  const sql = postgres(url, {
    max: 2,
    onnotice: () => {},
    types: { bigint: postgres.BigInt },
    connection: { application_name: "tenantd store copy" },
    connect_timeout: 10,
  });
  let reader: postgres.ReservedSql | undefined;
  try {
    await migrate(sql as unknown as PgSql);
  } catch (e) {
    await sql.end({ timeout: 1 });
    throw e;
  }
  const q = () => reader ?? sql;

  return {
    engine: "postgres",
    label,
    async snapshot() {
      reader = await sql.reserve();
      await reader.unsafe("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
    },
    async count(table) {
      const [row] = await q().unsafe(`SELECT COUNT(*) AS n FROM "${table.name}"`);
      return Number(row!.n);
    },
    async page(table, after, limit, opts = {}) {
      const order = opts.deferredOnly ? table.key : orderOf(table);
      const columns = opts.deferredOnly ? deferredColumns(table) : Object.keys(table.columns);
      const where = [after ? `(${list(order)}) > (${params(1, order.length)})` : "", ...(opts.deferredOnly ? (table.deferred ?? []).map((c) => `"${c}" IS NOT NULL`) : [])].filter(Boolean);
      const n = (after?.length ?? 0) + 1;
      const text = `SELECT ${list(order)}, ${list(columns)} FROM "${table.name}"${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${list(order)} LIMIT $${n}`;
      const raw = (await q().unsafe(text, [...(after ?? []), limit] as never[]).values()) as unknown as unknown[][];
      const rows = raw.map((r) => fromPg(table, columns, r.slice(order.length)));
      const last = raw.at(-1);
      return { rows, cursor: last ? (last.slice(0, order.length) as CopyValue[]) : null };
    },
    async insert(table, rows) {
      const columns = Object.keys(table.columns);
      const deferred = new Set((table.deferred ?? []).map((c) => columns.indexOf(c)));
      const casts = columns.map((c, i) => `$${i + 1}::${ARRAY_TYPE[table.columns[c]!]}`).join(", ");
      const overriding = table.identity ? " OVERRIDING SYSTEM VALUE" : "";
      await sql.begin((tx) => tx.unsafe(`INSERT INTO "${table.name}" (${list(columns)})${overriding} SELECT * FROM unnest(${casts})`, toColumns(rows, columns.length, deferred) as never[]));
    },
    async setDeferred(table, rows) {
      const columns = deferredColumns(table);
      const casts = columns.map((c, i) => `$${i + 1}::${ARRAY_TYPE[table.columns[c]!]}`).join(", ");
      const k = table.key.length;
      const set = columns.slice(k).map((c) => `"${c}" = v."${c}"`).join(", ");
      const match = table.key.map((c) => `t."${c}" = v."${c}"`).join(" AND ");
      await sql.begin((tx) =>
        tx.unsafe(`UPDATE "${table.name}" t SET ${set} FROM unnest(${casts}) AS v(${list(columns)}) WHERE ${match}`, toColumns(rows, columns.length) as never[]),
      );
    },
    async finishTable(table) {
      if (!table.identity) return;
      const c = table.identity;
      await sql.unsafe(
        `SELECT setval(pg_get_serial_sequence('"${table.name}"', '${c}'), COALESCE((SELECT max("${c}") FROM "${table.name}"), 1), (SELECT max("${c}") FROM "${table.name}") IS NOT NULL)`,
      );
    },
    async empty(tables) {
      await sql.unsafe(`TRUNCATE ${tables.map((t) => `"${t.name}"`).join(", ")} RESTART IDENTITY`);
    },
    async getMeta(key) {
      const [row] = await q().unsafe("SELECT value FROM server_meta WHERE key = $1", [key]);
      return (row?.value as string | undefined) ?? null;
    },
    async setMeta(key, value) {
      if (value === null) await sql.unsafe("DELETE FROM server_meta WHERE key = $1", [key]);
      else await sql.unsafe("INSERT INTO server_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", [key, value]);
    },
    async close() {
      if (reader) {
        await reader.unsafe("ROLLBACK").catch(() => undefined);
        reader.release();
      }
      await sql.end({ timeout: 5 });
    },
  };
}

/** The tables and columns of this PostgreSQL database's public schema (for the check that COPY_TABLES covers them). */
export async function postgresColumns(url: string): Promise<Record<string, string[]>> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    const rows = await sql<{ table_name: string; column_name: string }[]>`
      SELECT c.table_name, c.column_name FROM information_schema.columns c
      JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' ORDER BY c.table_name, c.ordinal_position`;
    const out: Record<string, string[]> = {};
    for (const r of rows) (out[r.table_name] ??= []).push(r.column_name);
    return out;
  } finally {
    await sql.end();
  }
}
