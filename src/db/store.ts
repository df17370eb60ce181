import { openDatabase, type SqliteDb } from "./sqlite/connection.ts";
import { checkpointWal } from "./sqlite/operations.ts";
import { createRepositories } from "./sqlite/index.ts";
import { watchCheckpoints } from "./sqlite/checkpointer.ts";
import { connectPostgres } from "./postgres/connection.ts";
import { migrate } from "./postgres/migrations.ts";
import { createPgRepositories } from "./postgres/index.ts";
import { claimServerKey } from "./postgres/meta.ts";
import { untilReady } from "./postgres/deferred.ts";
import { requireNotMoved } from "./moved.ts";
import { CHANGES_CHANNEL, createPgChanges, type PgChanges } from "./postgres/changes.ts";
import type { Repositories } from "./repositories.ts";
import type { Logger } from "../log.ts";

export interface DatabaseConfig {
  /** postgres://user:password@host:port/database */
  url: string;
  pool: { max: number };
}

/** The engine behind the repositories: SQLite (default) or PostgreSQL (`database.url`). */
export interface Store {
  engine: "sqlite" | "postgres";
  db: Repositories;
  /** The SQLite handle; on PostgreSQL any use throws (only tests and SQLite-only tools reach for it). */
  sqlite: SqliteDb;
  /** Settles when the schema is current (at once on SQLite). */
  ready: Promise<void>;
  /** PostgreSQL's cross-node change channel (changes.ts); undefined on SQLite. */
  changes?: PgChanges;
  close(): Promise<void>;
}

function noSqlite(): SqliteDb {
  return new Proxy({} as SqliteDb, {
    get() {
      throw new Error("tenantd: this core runs on PostgreSQL; core.sqlite is only there on SQLite");
    },
  });
}

export function openStore(config: { databasePath: string; database: DatabaseConfig | undefined; serverKey: Buffer; log: Logger }): Store {
  if (!config.database) {
    requireNotMoved(config.databasePath);
    const sqlite = openDatabase(config.databasePath);
    const checkpoints = watchCheckpoints(sqlite);
    return { engine: "sqlite", db: createRepositories(sqlite), sqlite, ready: Promise.resolve(), close: async () => {
      await checkpoints.close();
      checkpointWal(sqlite);
      sqlite.close();
    } };
  }
  const sql = connectPostgres(config.database.url, { max: config.database.pool.max });
  // The change feed's triggers come with the migrations: listen once they are in place.
  const changes = createPgChanges(config.database.url, (message) => config.log.warn(message));
  const ready = migrate(sql)
    .then(() => claimServerKey(sql, config.serverKey))
    .then(() => changes.start((payload) => sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${payload})`));
  // Unhandled until someone awaits it: createTenantBackend does, and every repository call.
  ready.catch(() => undefined);
  return {
    engine: "postgres",
    db: untilReady(createPgRepositories(sql, changes), ready),
    sqlite: noSqlite(),
    ready,
    changes,
    close: async () => {
      await changes.close();
      await sql.end({ timeout: 5 });
    },
  };
}
