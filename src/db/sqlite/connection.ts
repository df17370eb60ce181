import { chmodSync, closeSync, existsSync, openSync } from "node:fs";
import Database from "better-sqlite3";
import { migrate } from "./migrations.ts";
import { BUSY_TIMEOUT_MS, CONNECTION_PRAGMAS } from "./pragmas.ts";

export type SqliteDb = Database.Database;

/**
 * Opens the SQLite file with the settings every tenantd process shares: WAL so readers
 * never wait for the writer, a busy timeout so a CLI writing beside a running server waits
 * instead of failing, foreign keys on, synchronous=NORMAL (durable at each checkpoint).
 */
export function openDatabase(path: string): SqliteDb {
  if (path !== ":memory:") ownerOnly(path);
  const db = new Database(path);
  // Before anything else: a second process opening a new file waits for the first's lock.
  db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  enableWal(db);
  for (const pragma of CONNECTION_PRAGMAS) db.pragma(pragma);
  migrate(db);
  return db;
}

/**
 * Switches a new file to WAL. Several processes doing it at once may be refused with
 * SQLITE_BUSY without SQLite waiting on its busy timeout (it does not wait where waiting
 * could deadlock two lock upgrades), so the switch is tried again for as long as the
 * timeout, a few milliseconds apart. Only at startup: blocking the thread is harmless then.
 */
function enableWal(db: SqliteDb): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (e) {
      if ((e as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw e;
      Atomics.wait(pause, 0, 0, 10 + Math.random() * 20);
    }
  }
}

/**
 * The database holds password hashes and sealed secrets: 0600 whatever the umask. SQLite
 * creates the -wal and -shm files with the database file's mode.
 */
function ownerOnly(path: string): void {
  if (!existsSync(path)) closeSync(openSync(path, "a", 0o600));
  if (process.platform === "win32") return;
  for (const f of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      chmodSync(f, 0o600);
    } catch {
      // not there yet, or not ours to change (a read-only mount): SQLite reports what matters
    }
  }
}

/** Runs `fn` in an IMMEDIATE transaction: the write lock is taken up front, so no deadlock on upgrade. */
export function inTransaction<T>(db: SqliteDb, fn: () => T): T {
  return db.transaction(fn).immediate();
}

