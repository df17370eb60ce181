import { inject } from "vitest";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { POOL_TABLE, TEMPLATE_DATABASE } from "./_postgres-server.ts";

/**
 * Databases for tests on the run's PostgreSQL server (test/_postgres-server.ts).
 *
 * Creating a database, even as a copy of the migrated template, costs a few hundred
 * milliseconds of file copying and WAL; the suite starts about a thousand backends. So a
 * database given back is reset to the template's state (rows deleted, indexes a test
 * added dropped, the migrations' rows put back) and kept in a pool the server holds for
 * every worker process; the next backend takes it instead of a new copy. A database whose
 * tables or indexes no longer match the template is dropped, not reused.
 */

type Admin = postgres.Sql;
let admin: Admin | undefined;
/** One connection per worker to the server's `postgres` database, closed when idle. */
function adminSql(): Admin {
  return (admin ??= postgres(serverUrl(), { max: 1, idle_timeout: 1, onnotice: () => {} }));
}

function serverUrl(): string {
  const url = inject("postgresUrl");
  if (!url) throw new Error("tenantd tests: no PostgreSQL server; test/_postgres-server.ts must be a vitest globalSetup");
  return url;
}

function databaseUrl(name: string): string {
  const url = new URL(serverUrl());
  url.pathname = `/${name}`;
  return url.toString();
}

async function dropDatabase(name: string): Promise<void> {
  await adminSql().unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** Empties a used test database back to the template's state; false when it cannot be reused. */
async function resetDatabase(name: string): Promise<boolean> {
  const template = inject("postgresTemplate");
  const sql = postgres(databaseUrl(name), { max: 1, onnotice: () => {} });
  try {
    // Whatever a test left connected (a core it did not close) lets go of its locks.
    await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
    const tables = (await sql<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`).map((r) => r.tablename);
    if (tables.join() !== template.tables.join()) return false;
    const indexes = (await sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()`).map((r) => r.indexname);
    const known = new Set(template.indexes);
    if (template.indexes.some((i) => !indexes.includes(i))) return false;
    // One round trip. DELETE, with foreign-key triggers off for the reset, is much cheaper
    // than TRUNCATE on small tables (TRUNCATE makes new files for every table and index).
    const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
    await sql.unsafe(
      [
        "BEGIN",
        "SET LOCAL session_replication_role = replica",
        ...indexes.filter((i) => !known.has(i)).map((i) => `DROP INDEX "${i}"`),
        ...tables.map((t) => `DELETE FROM "${t}"`),
        ...template.sequences.map((q) => `ALTER SEQUENCE "${q}" RESTART`),
        ...Object.entries(template.rows).map(([t, rows]) => `INSERT INTO "${t}" SELECT * FROM json_populate_recordset(NULL::"${t}", ${literal(rows)}::json)`),
        "COMMIT",
      ].join(";\n"),
    );
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** A fresh copy of the template, or a reset one from the pool. */
async function takeDatabase(): Promise<string> {
  const [free] = await adminSql()<{ name: string }[]>`
    DELETE FROM ${adminSql()(POOL_TABLE)} WHERE name = (SELECT name FROM ${adminSql()(POOL_TABLE)} LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING name`;
  if (free) return free.name;
  const name = `t_${randomBytes(6).toString("hex")}`;
  await adminSql().unsafe(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  return name;
}

async function giveBack(name: string): Promise<void> {
  if (await resetDatabase(name)) await adminSql()`INSERT INTO ${adminSql()(POOL_TABLE)} (name) VALUES (${name})`;
  else await dropDatabase(name);
}

/**
 * A database of its own for a test: migrated (from the pool), or empty with the template's
 * collation for tests of the migrations themselves. `drop()` gives it back.
 */
export async function createTestDatabase(opts: { empty?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  if (!opts.empty) {
    const name = await takeDatabase();
    return { url: databaseUrl(name), drop: () => giveBack(name) };
  }
  const name = `t_${randomBytes(6).toString("hex")}`;
  // A linguistic collation, as the template has (ICU en-US): see test/_postgres-server.ts.
  await adminSql().unsafe(`CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`);
  return { url: databaseUrl(name), drop: () => dropDatabase(name) };
}

/** Databases by data directory: a backend restarted on the same dataDir finds its data again. */
const byDataDir = new Map<string, Promise<{ url: string; drop: () => Promise<void> }>>();

/** The database URL of the test backends on `dataDir`, if any was started there on PostgreSQL. */
export async function knownStoreUrl(dataDir: string): Promise<string | undefined> {
  return (await byDataDir.get(dataDir))?.url;
}

/**
 * The one switch that runs the API suite on PostgreSQL: with TENANTD_TEST_ENGINE=postgres,
 * every test backend gets a database on the run's server instead of a SQLite file (the same
 * one again for the same data directory). `drop` is given to the first user only.
 */
export async function testStoreConfig(dataDir: string): Promise<{ config: { database?: { url: string } }; drop?: () => Promise<void> }> {
  if (process.env.TENANTD_TEST_ENGINE !== "postgres") return { config: {} };
  const known = byDataDir.get(dataDir);
  if (known) return { config: { database: { url: (await known).url } } };
  const created = createTestDatabase();
  byDataDir.set(dataDir, created);
  const db = await created;
  return {
    config: { database: { url: db.url } },
    drop: async () => {
      byDataDir.delete(dataDir);
      await db.drop();
    },
  };
}
