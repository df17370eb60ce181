import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { ConfigError } from "../config.ts";

/** Left in a data directory whose store `tenantd store copy` moved to PostgreSQL. */
export const MOVED_FILE = "moved-to-postgres.json";

interface Moved {
  /** host:port/database, never the user or password */
  to: string;
  at: string;
}

/** Where a PostgreSQL URL points, as it may be printed. */
export function postgresTarget(url: string): string {
  const u = new URL(url);
  return `${u.hostname.toLowerCase()}:${u.port || "5432"}${decodeURIComponent(u.pathname) || "/"}`;
}

export function markMoved(dataDir: string, url: string, now: Date): string {
  const file = join(dataDir, MOVED_FILE);
  writeFileSync(file, JSON.stringify({ to: postgresTarget(url), at: now.toISOString() } satisfies Moved, null, 2) + "\n", { mode: 0o600 });
  return file;
}

/** The store came back to this directory (a copy into it): its SQLite file is the live one again. */
export function unmarkMoved(dataDir: string): void {
  rmSync(join(dataDir, MOVED_FILE), { force: true });
}

/**
 * Refuses to open a SQLite file whose data moved to PostgreSQL: a server or CLI started
 * without the database URL would otherwise write to the old copy, and its writes would be
 * lost to the cluster.
 */
export function requireNotMoved(databasePath: string): void {
  if (databasePath === ":memory:") return;
  const file = join(dirname(databasePath), MOVED_FILE);
  if (!existsSync(file)) return;
  let moved: Partial<Moved> = {};
  try {
    moved = JSON.parse(readFileSync(file, "utf8")) as Partial<Moved>;
  } catch {
    // An unreadable marker still means the directory moved.
  }
  throw new MovedStoreError(
    `this data directory's store moved to PostgreSQL (${moved.to ?? "see " + file}${moved.at ? `, on ${moved.at}` : ""}) with tenantd store copy, so its SQLite file is an old copy. ` +
      `Set TENANTD_DATABASE_URL (or the config file's database.url) to postgres://USER:PASSWORD@${moved.to ?? "HOST:5432/DATABASE"} to use the moved store; ` +
      `to go back to the SQLite file on purpose, delete ${file}.`,
  );
}

/** A configuration error: the fix is the database option. */
export class MovedStoreError extends ConfigError {
  override name = "MovedStoreError";
}
