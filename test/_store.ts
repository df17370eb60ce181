import postgres from "postgres";
import type { Core } from "../src/core.ts";
import type { TenantBackend } from "../src/index.ts";
import { afterThisTest } from "./_helpers.ts";

/**
 * The rows behind a test backend, read the same way on either engine, for promises about
 * what is stored (only hashes at rest, nothing left of a deleted tenant) that no API shows.
 * SQL is written once with `?` placeholders in the dialect both engines share; on
 * PostgreSQL they become `$1, $2…`. Column names come back as stored (snake_case).
 */
export interface StoreRows {
  engine: "sqlite" | "postgres";
  all<T = Record<string, unknown>>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The first column of every row. */
  column<T = unknown>(sql: string, ...params: unknown[]): Promise<T[]>;
  /** The first column of the first row. */
  value<T = unknown>(sql: string, ...params: unknown[]): Promise<T>;
  run(sql: string, ...params: unknown[]): Promise<void>;
  /** Every table of tenantd's schema with its columns. */
  tables(): Promise<{ name: string; columns: string[] }[]>;
}

const dollarParams = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

export function storeRows(of: TenantBackend | Core): StoreRows {
  const core = "core" in of ? of.core : of;
  if (core.engine === "sqlite") {
    const db = core.sqlite;
    const all = async <T>(sql: string, ...params: unknown[]) => db.prepare(sql).all(...params) as T[];
    return {
      engine: "sqlite",
      all,
      column: async <T>(sql: string, ...params: unknown[]) => db.prepare(sql).pluck().all(...params) as T[],
      value: async <T>(sql: string, ...params: unknown[]) => db.prepare(sql).pluck().get(...params) as T,
      run: async (sql, ...params) => void db.prepare(sql).run(...params),
      async tables() {
        const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
        return names.map((name) => ({ name, columns: (db.prepare(`PRAGMA table_info("${name}")`).all() as { name: string }[]).map((c) => c.name) }));
      },
    };
  }
  const sql = postgres(core.config.database!.url, {
    max: 1,
    onnotice: () => {},
    // COUNT(*) and the ms timestamps are int8: numbers, as SQLite gives them.
    types: { bigint: { to: 20, from: [20], serialize: (n: number) => String(n), parse: (s: string) => Number(s) } },
  });
  afterThisTest(() => sql.end({ timeout: 5 }));
  const all = async <T>(text: string, ...params: unknown[]) => (await sql.unsafe(dollarParams(text), params as never[])) as unknown as T[];
  const first = (row: Record<string, unknown> | undefined) => (row === undefined ? undefined : Object.values(row)[0]);
  return {
    engine: "postgres",
    all,
    column: async <T>(text: string, ...params: unknown[]) => (await all<Record<string, unknown>>(text, ...params)).map(first) as T[],
    value: async <T>(text: string, ...params: unknown[]) => first((await all<Record<string, unknown>>(text, ...params))[0]) as T,
    run: async (text, ...params) => void (await sql.unsafe(dollarParams(text), params as never[])),
    async tables() {
      const rows = await sql<{ table_name: string; column_name: string }[]>`
        SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position`;
      const byTable = new Map<string, string[]>();
      for (const r of rows) byTable.set(r.table_name, [...(byTable.get(r.table_name) ?? []), r.column_name]);
      return [...byTable].map(([name, columns]) => ({ name, columns }));
    },
  };
}
