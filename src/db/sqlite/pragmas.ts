/**
 * Settings every tenantd connection to the SQLite file shares: the server's (connection.ts)
 * and the checkpointer's on its worker thread (checkpoint-worker.ts).
 */

/** How long a write waits for another connection's write lock before failing with SQLITE_BUSY. */
export const BUSY_TIMEOUT_MS = 5000;

/** Per-connection settings (not stored in the file), applied after busy_timeout and WAL. */
export const CONNECTION_PRAGMAS = ["synchronous = NORMAL", "foreign_keys = ON", "temp_store = MEMORY"] as const;
