import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";
import type { CheckpointMessage, CheckpointWorkerData } from "./checkpointer.ts";
import { BUSY_TIMEOUT_MS, CONNECTION_PRAGMAS } from "./pragmas.ts";

/**
 * The checkpoint worker (checkpointer.ts): copies the WAL into the database file on its own
 * connection, so the copying and its fsyncs run beside the server's event loop, not on it.
 */
const { path, restartFrames, busyMs, idleMs } = workerData as CheckpointWorkerData;
const db = new Database(path, { fileMustExist: true });
db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
for (const pragma of CONNECTION_PRAGMAS) db.pragma(pragma);
const say = (message: CheckpointMessage) => parentPort!.postMessage(message);

function pass(): void {
  const [wal] = db.pragma("wal_checkpoint(PASSIVE)") as { busy: number; log: number; checkpointed: number }[];
  // The server's connection finishes this one; the next pass waits for its "go".
  if (wal && wal.log >= restartFrames) return say("restart");
  setTimeout(pass, wal && wal.checkpointed > 0 ? busyMs : idleMs);
}

parentPort!.on("message", () => setTimeout(pass, busyMs));
say("ready");
pass();
