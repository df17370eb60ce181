import { inject } from "vitest";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { TEMPLATE_DATABASE } from "./_postgres-server.ts";

/**
 * A database of its own for one test file, on the run's PostgreSQL server
 * (test/_postgres-server.ts). Dropped by `drop()`, and with the server at the end anyway.
 */
export async function createTestDatabase(opts: { empty?: boolean } = {}): Promise<{ url: string; drop: () => Promise<void> }> {
  const serverUrl = inject("postgresUrl");
  if (!serverUrl) throw new Error("tenantd tests: no PostgreSQL server; test/_postgres-server.ts must be a vitest globalSetup");
  const name = `t_${randomBytes(6).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    // Copied from the run's migrated template (ICU en-US collation), or empty with the same
    // collation for tests of the migrations themselves.
    await admin.unsafe(
      opts.empty
        ? `CREATE DATABASE ${name} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`
        : `CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`,
    );
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await sql.end();
      }
    },
  };
}

/** Databases by data directory: a backend restarted on the same dataDir finds its data again. */
const byDataDir = new Map<string, Promise<{ url: string; drop: () => Promise<void> }>>();

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
