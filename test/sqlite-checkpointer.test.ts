import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openDatabase, type SqliteDb } from "../src/db/sqlite/connection.ts";
import { watchCheckpoints, type Checkpointer } from "../src/db/sqlite/checkpointer.ts";

/**
 * WAL checkpoints on a worker thread (src/db/sqlite/checkpointer.ts). The writes are
 * `INSERT … RETURNING` read for one row, the kind after which SQLite never checkpoints on
 * its own: without the worker, every one of them stays in the WAL.
 */
const opened: { db: SqliteDb; checkpoints: Checkpointer }[] = [];
afterEach(async () => {
  for (const { db, checkpoints } of opened.splice(0)) {
    await checkpoints.close();
    db.close();
  }
});

function setup(options: Parameters<typeof watchCheckpoints>[1] = {}) {
  const path = join(mkdtempSync(join(tmpdir(), "tenantd-checkpoint-")), "tenantd.db");
  const db = openDatabase(path);
  db.exec("CREATE TABLE counters (id TEXT PRIMARY KEY, n INTEGER NOT NULL, pad TEXT NOT NULL)");
  // SQLite's own 1,000 pages as the restart bound (the server's is larger), so 20,000 writes restart it many times.
  const checkpoints = watchCheckpoints(db, { busyChanges: 50, watchMs: 20, busyMs: 10, idleMs: 50, restartFrames: 1_000, ...options });
  opened.push({ db, checkpoints });
  const bump = db.prepare<[string, string], number>("INSERT INTO counters (id, n, pad) VALUES (?, 1, ?) ON CONFLICT DO UPDATE SET n = n + 1, pad = excluded.pad RETURNING n").pluck();
  return { db, checkpoints, bump };
}

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(condition()).toBe(true);
}

/** `total` single-row upserts, 200 between turns of the event loop, as a busy server makes them. */
async function write(bump: (id: string) => unknown, total: number): Promise<void> {
  for (let i = 0; i < total; i += 200) {
    for (let j = i; j < i + 200; j++) bump(`c${j % 5000}`);
    await tick();
  }
}

describe("WAL checkpoints on a worker thread", () => {
  it("start under steady writes, take checkpointing off the server's connection, and keep the WAL bounded", async () => {
    const { db, checkpoints, bump } = setup();
    const pad = "x".repeat(300);
    expect(checkpoints.running).toBe(false);
    await write((id) => bump.get(id, pad), 1_000);
    await until(() => checkpoints.running);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    await write((id) => bump.get(id, pad), 20_000);
    // Pages written since the WAL last started over: 1,000 (SQLite's own bound) plus what
    // arrives between two of the worker's passes. Never started over, it would hold ~20,000.
    const [wal] = db.pragma("wal_checkpoint(PASSIVE)") as { log: number }[];
    expect(wal!.log).toBeLessThan(3_000);
    expect(db.prepare("SELECT SUM(n) FROM counters").pluck().get()).toBe(21_000);
  });

  it("hand checkpointing back to SQLite when the worker stops, and when closed", async () => {
    const { db, checkpoints, bump } = setup();
    await write((id) => bump.get(id, "y"), 2_000);
    await until(() => checkpoints.running);
    await checkpoints.close();
    expect(checkpoints.running).toBe(false);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
  });

  it("stay idle on a connection that hardly writes", async () => {
    const { checkpoints, bump } = setup({ busyChanges: 10_000 });
    await write((id) => bump.get(id, "z"), 1_000);
    await new Promise((r) => setTimeout(r, 60));
    expect(checkpoints.running).toBe(false);
  });

  it("never start for an in-memory database", async () => {
    const db = openDatabase(":memory:");
    const checkpoints = watchCheckpoints(db, { busyChanges: 1, watchMs: 5 });
    opened.push({ db, checkpoints });
    db.exec("CREATE TABLE t (n INTEGER)");
    for (let i = 0; i < 100; i++) db.prepare("INSERT INTO t VALUES (?)").run(i);
    await new Promise((r) => setTimeout(r, 40));
    expect(checkpoints.running).toBe(false);
  });
});
