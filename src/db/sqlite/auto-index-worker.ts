import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import { buildIndex, type BuildJob, type BuildReply } from "./auto-index-build.ts";
import { BUSY_TIMEOUT_MS, CONNECTION_PRAGMAS } from "./pragmas.ts";

/**
 * A worker thread that builds one automatic index (auto-index-build.ts) on its own
 * connection: WAL is the file's, so the server's connection keeps reading meanwhile; the
 * busy timeout lets the build wait for a write of the server or the CLI to finish first.
 */
const { path, job } = workerData as { path: string; job: BuildJob };
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * The new index is in the WAL. Its commit copied what it could into the file; a read of the
 * server still on the previous snapshot holds the rest back, and the server's next commit
 * would copy it, on the event loop. So it is copied here, trying again for up to ~0.2 s.
 */
function checkpoint(db: Database.Database): void {
  for (let attempt = 0; attempt < 100; attempt++) {
    const [wal] = db.pragma("wal_checkpoint(PASSIVE)") as { log: number; checkpointed: number }[];
    if (!wal || wal.checkpointed >= wal.log) return;
    Atomics.wait(pause, 0, 0, 2);
  }
}
const answer = (reply: BuildReply) => parentPort!.postMessage(reply);
try {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    for (const pragma of CONNECTION_PRAGMAS) db.pragma(pragma);
    const outcome = buildIndex(db, job);
    if (outcome.built) checkpoint(db);
    // Answered before closing: the server's writes wait for this answer.
    answer({ ok: true, outcome });
  } finally {
    db.close();
  }
} catch (error) {
  answer({ ok: false, message: (error as Error).message });
}
