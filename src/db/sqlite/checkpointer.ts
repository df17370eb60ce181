import { Worker } from "node:worker_threads";
import type { SqliteDb } from "./connection.ts";
import { workerFile } from "./worker-file.ts";

/** What the checkpoint worker and the server's connection say to each other. */
export type CheckpointMessage = "ready" | "restart" | "go";

export interface CheckpointWorkerData {
  path: string;
  /** WAL frames past which the worker asks the server's connection to finish a checkpoint */
  restartFrames: number;
  /** pause between passes while there was something to copy, and while there was not */
  busyMs: number;
  idleMs: number;
}

export interface CheckpointOptions {
  /** rows changed within one `watchMs` that start the worker */
  busyChanges: number;
  watchMs: number;
  restartFrames: number;
  busyMs: number;
  idleMs: number;
}

/** SQLite's own automatic checkpoint, in WAL frames (pages): restored when the worker goes. */
const SQLITE_AUTOCHECKPOINT = 1000;

/**
 * WAL pages (4 KiB each: about 64 MiB) before the server's connection is asked to finish a
 * checkpoint so the WAL starts over. That finish runs on the event loop, and its two fsyncs
 * took 15–20 ms here however few pages were left: at SQLite's own 1,000 pages it came after
 * nearly every pass of the worker under steady writes, 10–15 times a second of refreshes,
 * up to a fifth of the loop's time (docs/performance.md, fourteenth round). Readers look up
 * only the pages past the last checkpoint, which the worker keeps short: a longer WAL costs disk.
 */
const RESTART_FRAMES = 16_000;

const DEFAULTS: CheckpointOptions = { busyChanges: 500, watchMs: 1000, restartFrames: RESTART_FRAMES, busyMs: 50, idleMs: 500 };

export interface Checkpointer {
  /** Whether the worker is copying the WAL (false before the first busy second, and after a failure). */
  readonly running: boolean;
  close(): Promise<void>;
}

/**
 * Moves WAL checkpoints off the event loop once the server writes steadily.
 *
 * SQLite checkpoints on the connection that commits: copying the WAL into the file and two
 * fsyncs, 11–16 ms on the event loop every thousand pages (docs/performance.md, eleventh
 * round). And it only does so when a statement steps to its end, which an `INSERT …
 * RETURNING` read for one row never does, so under such writes the WAL grows until some other
 * statement pays for all of it.
 *
 * Once `busyChanges` rows change within a second, a worker thread opens its own connection
 * and copies the WAL into the file every `busyMs` (a passive checkpoint: writers never wait
 * for it), and the server's connection stops checkpointing on its own. A passive checkpoint
 * cannot restart the WAL while writes keep coming (measured: 1.8 GB in 8 s), so once the WAL
 * holds `restartFrames` pages the worker asks the server's connection to copy the last few
 * pages itself: with nothing left behind, its next commit starts the WAL over from the top.
 *
 * If the worker cannot start or stops, SQLite's automatic checkpoint takes over again.
 */
export function watchCheckpoints(db: SqliteDb, options: Partial<CheckpointOptions> = {}): Checkpointer {
  const o = { ...DEFAULTS, ...options };
  let worker: Worker | undefined;
  let running = false;
  let stopped = db.memory;
  const changes = db.prepare<[], number>("SELECT total_changes()").pluck();
  let seen = stopped ? 0 : changes.get()!;

  const fallBack = () => {
    worker = undefined;
    running = false;
    stopped = true;
    if (db.open) db.pragma(`wal_autocheckpoint = ${SQLITE_AUTOCHECKPOINT}`);
  };

  function start(): void {
    const data: CheckpointWorkerData = { path: db.name, restartFrames: o.restartFrames, busyMs: o.busyMs, idleMs: o.idleMs };
    try {
      worker = new Worker(workerFile("checkpoint-worker.js"), { workerData: data });
    } catch {
      return fallBack();
    }
    worker.unref();
    worker.on("message", (message: CheckpointMessage) => {
      if (!db.open) return;
      if (message === "ready") {
        db.pragma("wal_autocheckpoint = 0");
        running = true;
      } else if (message === "restart") {
        try {
          // Nothing of this connection's is in flight between two callbacks: the copy completes.
          db.pragma("wal_checkpoint(PASSIVE)");
        } catch {
          // Another connection's checkpoint or lock: the worker's next pass asks again.
        }
        worker?.postMessage("go" satisfies CheckpointMessage);
      }
    });
    worker.once("error", fallBack);
    worker.once("exit", fallBack);
  }

  const timer = stopped
    ? undefined
    : setInterval(() => {
        const now = changes.get()!;
        if (now - seen >= o.busyChanges && !worker && !stopped) start();
        seen = now;
      }, o.watchMs).unref();

  return {
    get running() {
      return running;
    },
    async close() {
      clearInterval(timer);
      stopped = true;
      const w = worker;
      if (!w) return;
      w.removeAllListeners();
      await w.terminate();
      fallBack();
    },
  };
}
