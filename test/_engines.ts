import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../src/db/sqlite/connection.ts";
import { createRepositories } from "../src/db/sqlite/index.ts";
import { openPostgres, type PgSql } from "../src/db/postgres/connection.ts";
import { createPgRepositories } from "../src/db/postgres/index.ts";
import type { Repositories } from "../src/db/repositories.ts";
import { createTestDatabase } from "./_postgres.ts";
import { readSettings } from "../src/apps/settings.ts";

/**
 * The engine this project's backends run on (vitest.config.ts sets TENANTD_TEST_ENGINE per
 * project). Files about one engine's own mechanism run in that engine's project only
 * (SQLITE_ONLY in vitest.config.ts), naming the other engine's test.
 */
export const TEST_ENGINE: "sqlite" | "postgres" = process.env.TENANTD_TEST_ENGINE === "postgres" ? "postgres" : "sqlite";

/** What both engines implement. */
export type PortedRepositories = Repositories;

export interface Engine {
  name: "sqlite" | "postgres";
  db: PortedRepositories;
  close(): Promise<void>;
}

export async function sqliteEngine(): Promise<Engine> {
  const dir = mkdtempSync(join(tmpdir(), "tenantd-engine-"));
  const sqlite = openDatabase(join(dir, "data.db"));
  return {
    name: "sqlite",
    db: createRepositories(sqlite),
    async close() {
      sqlite.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function postgresEngine(opts: { max?: number } = {}): Promise<Engine & { sql: PgSql; url: string }> {
  const database = await createTestDatabase();
  const sql = await openPostgres(database.url, { max: opts.max ?? 10 });
  return {
    name: "postgres",
    db: createPgRepositories(sql),
    sql,
    url: database.url,
    async close() {
      await sql.end({ timeout: 5 });
      await database.drop();
    },
  };
}

/** The app "app1" and its tenants, as the tests comparing the engines seed each engine. */
export async function seedApp(db: Repositories, tenants: string[], at: number): Promise<void> {
  await db.apps.insert({ id: "app1", name: "A", publishableKey: "pk", secretKeyHash: null, ownerId: null, settings: readSettings({}), createdAt: at, updatedAt: at });
  for (const t of tenants) {
    await db.tenants.createWithSession(
      { id: t, appId: "app1", email: `${t}@x.io`, passwordHash: null, emailVerifiedAt: null, locale: "en", parentTenantId: null, createdAt: at },
      { id: `s-${t}`, refreshHash: `r-${t}`, createdAt: at, expiresAt: at + 1e9 },
    );
  }
}
