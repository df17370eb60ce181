import postgres from "postgres";
import { migrate } from "./migrations.ts";

/**
 * The PostgreSQL engine's handle: a pool from the `postgres` driver (porsager). Columns come
 * back camelCased (app_id → appId) so rows map onto the shared row types; int8 (times in
 * ms, counts) comes back as a JS number: every value tenantd stores there is below 2^53.
 */
export type PgSql = postgres.Sql<{ bigint: number }>;
/** A transaction's handle; it runs the same tagged-template queries as the pool. */
export type PgTx = postgres.TransactionSql<{ bigint: number }>;
/** Either one: a statement that may run alone or inside a caller's transaction. */
export type PgQuery = PgSql | PgTx;

export interface PgOptions {
  /** connections in this process's pool (default 10) */
  max?: number;
}

export function connectPostgres(url: string, options: PgOptions = {}): PgSql {
  return postgres(url, {
    max: options.max ?? 10,
    onnotice: () => {},
    transform: { column: { from: postgres.toCamel } },
    types: {
      bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) },
    },
    // No parallel workers: a backend's statements are many and short, and a worker's start
    // (a process per worker) costs more CPU than the statement it helps, e.g. a rare word's
    // search at 1M records: 0.2 ms of work, 5 ms with two workers launched (bench/NOTES.md).
    // A `max_parallel_workers_per_gather` in the database URL's query string wins.
    connection: { application_name: "tenantd", max_parallel_workers_per_gather: "0" },
  }) as unknown as PgSql;
}

/** Connects and brings the schema up to date (under an advisory lock: many nodes may start at once). */
export async function openPostgres(url: string, options: PgOptions = {}): Promise<PgSql> {
  const sql = connectPostgres(url, options);
  try {
    await migrate(sql);
  } catch (e) {
    await sql.end({ timeout: 1 });
    throw e;
  }
  return sql;
}

/** A write refused by a unique or primary-key constraint (a lost race for the same key). */
export function isPgUniqueViolation(e: unknown): boolean {
  return e instanceof postgres.PostgresError && e.code === "23505";
}

export function isPgForeignKeyViolation(e: unknown): boolean {
  return e instanceof postgres.PostgresError && e.code === "23503";
}

/**
 * PostgreSQL refused a text value holding the NUL character (U+0000), which its text types
 * cannot store (SQLite can): the client's input, not a server fault.
 */
export function isPgNulRejection(e: unknown): boolean {
  return e instanceof postgres.PostgresError && e.code === "22021" && /0x00/.test(e.message);
}

/**
 * A PostgreSQL data exception (SQLSTATE class 22): a value it cannot take, such as JSON text
 * with a NUL or an unpaired surrogate, or a number out of a column's range. The input's
 * fault: the input checks (src/data/records.ts) refuse what they know of first.
 */
export function pgDataExceptionCode(e: unknown): string | undefined {
  return e instanceof postgres.PostgresError && e.code.startsWith("22") ? e.code : undefined;
}
