import { Worker } from "node:worker_threads";
import type { SqliteDb } from "./connection.ts";
import { workerFile } from "./worker-file.ts";

/** One automatic index to build (record-auto-indexes.ts). */
export interface BuildJob {
  appId: string;
  collection: string;
  /** no build when the app's collection holds more records */
  maxRows: number;
  /** CREATE INDEX IF NOT EXISTS … */
  index: string;
  /** The index's row, written in the same transaction with `@rows` and `@build_ms` bound. */
  record: { sql: string; params: Record<string, string | number> };
}

export type BuildOutcome = { built: true; rows: number; buildMs: number } | { built: false; rows: number };

/**
 * Counts the collection (all tenants: the index covers them all), then builds the index and
 * writes its row in one IMMEDIATE transaction. The count comes first, outside the
 * transaction, so writes do not wait for it.
 */
export function buildIndex(db: SqliteDb, job: BuildJob): BuildOutcome {
  const rows = db.prepare<[string, string], number>("SELECT COUNT(*) FROM records WHERE app_id = ? AND collection = ?").pluck().get(job.appId, job.collection) ?? 0;
  if (rows > job.maxRows) return { built: false, rows };
  const buildMs = db
    .transaction(() => {
      const started = performance.now();
      db.exec(job.index);
      const ms = Math.round(performance.now() - started);
      db.prepare(job.record.sql).run({ ...job.record.params, rows, build_ms: ms });
      return ms;
    })
    .immediate();
  return { built: true, rows, buildMs };
}

export type BuildReply = { ok: true; outcome: BuildOutcome } | { ok: false; message: string };

export interface RunningBuild {
  /** Settles when the build has committed (or given up). */
  done: Promise<BuildOutcome>;
  /** Settles when the worker thread is gone. */
  exited: Promise<void>;
}

/**
 * Builds on a worker thread's own connection to the same file, so the server's event loop
 * keeps answering while SQLite counts the rows and writes the index. An in-memory database
 * cannot be shared with another connection: it is built here, synchronously, as before.
 */
export function runBuild(db: SqliteDb, job: BuildJob): RunningBuild {
  if (db.memory) {
    const done = new Promise<BuildOutcome>((resolve) => resolve(buildIndex(db, job)));
    return { done, exited: done.then(() => undefined, () => undefined) };
  }
  let worker: Worker;
  try {
    worker = new Worker(workerFile("auto-index-worker.js"), { workerData: { path: db.name, job } });
  } catch (error) {
    return { done: Promise.reject(error as Error), exited: Promise.resolve() };
  }
  const exited = new Promise<void>((resolve) => worker.once("exit", () => resolve()));
  const done = new Promise<BuildOutcome>((resolve, reject) => {
    worker.once("message", (reply: BuildReply) => (reply.ok ? resolve(reply.outcome) : reject(new Error(reply.message))));
    worker.once("error", reject);
    void exited.then(() => reject(new Error("the build's worker stopped without an answer")));
  });
  return { done, exited };
}
