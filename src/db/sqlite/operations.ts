import Database from "better-sqlite3";
import type { SqliteDb } from "./connection.ts";

/** Operator-side database work (health, shutdown, backup, restore): SQLite only. */

/** Moves the WAL into the database file and empties it, so a stopped server leaves one file. */
export function checkpointWal(db: SqliteDb): void {
  if (db.open && !db.memory) db.pragma("wal_checkpoint(TRUNCATE)");
}

/**
 * A consistent copy of a live database through SQLite's online backup API: writers keep
 * going, and the copy is the database as of one moment. `progress` gets (done, total) pages.
 */
export async function backupDatabase(db: SqliteDb, destination: string, progress?: (done: number, total: number) => void): Promise<void> {
  await db.backup(destination, {
    progress({ totalPages, remainingPages }) {
      progress?.(totalPages - remainingPages, totalPages);
      return 256;
    },
  });
}

/** `PRAGMA integrity_check` of a database file and what it holds, read-only. */
export function inspectDatabase(path: string): { integrity: string; counts: Record<string, number> } {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma("integrity_check") as { integrity_check: string }[];
    const integrity = rows.map((r) => r.integrity_check).join("; ");
    const counts: Record<string, number> = {};
    for (const table of ["apps", "developers", "tenants", "records", "files"]) {
      counts[table] = (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;
    }
    return { integrity, counts };
  } finally {
    db.close();
  }
}
