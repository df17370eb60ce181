import type { PgSql } from "./connection.ts";
import { isPgUniqueViolation } from "./connection.ts";

/** Tries of one index statement that PostgreSQL ended as a deadlock. */
const DEADLOCK_TRIES = 5;

const codeOf = (e: unknown) => (e as { code?: string }).code;

/**
 * CREATE and DROP INDEX CONCURRENTLY for the records table: no app's writes wait for them,
 * but two of them on one table wait for each other's transactions, and PostgreSQL ends one
 * as a deadlock (expression and partial indexes are not exempt). So this node runs one at a
 * time, and one that another node's build deadlocked is tried again.
 */
export function createIndexDdl(sql: PgSql) {
  let chain: Promise<unknown> = Promise.resolve();
  function serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = chain.then(fn);
    chain = run.catch(() => undefined);
    return run;
  }
  async function retried<T>(fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (codeOf(e) !== "40P01" || attempt >= DEADLOCK_TRIES) throw e;
        await new Promise((resolve) => setTimeout(resolve, 50 + Math.random() * 200 * attempt));
      }
    }
  }

  /** Builds `sql` (CREATE INDEX CONCURRENTLY IF NOT EXISTS) and makes sure the index is valid. */
  async function buildOnce(index: { name: string; sql: string }) {
    try {
      await sql.unsafe(index.sql);
    } catch (e) {
      // Another node created the same index between the existence check and the build.
      if (!isPgUniqueViolation(e) && codeOf(e) !== "42P07") throw e;
      return;
    }
    // A concurrent build cut short (a crash, a deadlock, a cancel) leaves an INVALID index that
    // IF NOT EXISTS would keep forever: one that is invalid with no build in progress is built again.
    const [state] = await sql<{ valid: boolean; building: boolean }[]>`
      SELECT i.indisvalid AS valid, EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = c.oid) AS building
      FROM pg_class c JOIN pg_index i ON i.indexrelid = c.oid WHERE c.relname = ${index.name} AND c.relnamespace = current_schema()::regnamespace`;
    if (state && !state.valid && !state.building) {
      await sql.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS "${index.name}"`);
      await sql.unsafe(index.sql);
    }
  }

  return {
    build: (index: { name: string; sql: string }) => serial(() => retried(() => buildOnce(index))),
    /** `name` is checked by the caller against its own naming pattern. */
    drop: (name: string) => serial(() => retried(() => sql.unsafe(`DROP INDEX CONCURRENTLY IF EXISTS "${name}"`))),
  };
}

export type IndexDdl = ReturnType<typeof createIndexDdl>;
