import { afterEach, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { writeBatch } from "../src/db/sqlite/write-batch.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function open() {
  const dir = mkdtempSync(join(tmpdir(), "tenantd-batch-"));
  dirs.push(dir);
  const path = join(dir, "t.db");
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.exec("CREATE TABLE counters (key TEXT PRIMARY KEY, n INTEGER NOT NULL CHECK (n <= 5)); CREATE TABLE log (n INTEGER)");
  const bump = db.prepare<[string], number>("INSERT INTO counters (key, n) VALUES (?, 1) ON CONFLICT DO UPDATE SET n = n + 1 RETURNING n").pluck();
  const count = (key: string) => db.prepare<[string], number>("SELECT n FROM counters WHERE key = ?").pluck().get(key) ?? 0;
  return { db, path, bump, count };
}

describe("the SQLite write batch (group commit)", () => {
  it("runs one turn's writes in order, in one transaction, and settles each after the commit", async () => {
    const { db, path, bump, count } = open();
    const batch = writeBatch(db);
    // Read by another connection: it sees committed rows only.
    const reader = new Database(path, { readonly: true });
    const committed = () => (reader.prepare("SELECT n FROM counters WHERE key = 'a'").pluck().get() as number | undefined) ?? 0;
    const commits: number[] = [];
    const before = db.prepare("SELECT total_changes()").pluck().get() as number;
    db.pragma("wal_checkpoint(TRUNCATE)");
    const writes = [batch.add(() => bump.get("a")), batch.add(() => bump.get("a")), batch.add(() => bump.get("b")), batch.add(() => bump.get("a"))];
    // Nothing is written before the turn ends.
    expect(count("a")).toBe(0);
    expect(db.inTransaction).toBe(false);
    const settled = writes.map((w) => w.then((n) => (commits.push(committed()), n)));
    expect(await Promise.all(settled)).toEqual([1, 2, 1, 3]);
    // Every caller heard after all four were committed.
    expect(commits).toEqual([3, 3, 3, 3]);
    expect((db.prepare("SELECT total_changes()").pluck().get() as number) - before).toBe(4);
    // One commit: each page it changed (the table's and its key index's) is in the WAL once.
    expect(db.pragma("wal_checkpoint(PASSIVE)")).toEqual([{ busy: 0, log: 2, checkpointed: 2 }]);
    expect(writeBatch(db)).toBe(batch);
    reader.close();
  });

  it("fails a write SQLite undid alone, and keeps the others", async () => {
    const { db, bump, count } = open();
    const batch = writeBatch(db);
    for (let i = 0; i < 5; i++) await batch.add(() => bump.get("full"));
    const results = await Promise.allSettled([
      batch.add(() => bump.get("other")),
      batch.add(() => bump.get("full")), // past the CHECK: this statement is undone
      batch.add(() => {
        throw new TypeError("a bug in the caller");
      }),
      batch.add(() => bump.get("other")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "rejected", "fulfilled"]);
    expect((results[1] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_CONSTRAINT_CHECK" });
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
    expect(count("other")).toBe(2);
    expect(count("full")).toBe(5);
  });

  it("fails every write of the batch, keeping none, when the transaction ends", async () => {
    const { db, bump, count } = open();
    const batch = writeBatch(db);
    const results = await Promise.allSettled([
      batch.add(() => bump.get("a")),
      batch.add(() => {
        // What SQLite does on some I/O errors: the whole transaction is rolled back.
        db.exec("ROLLBACK");
        throw new Error("disk I/O error");
      }),
      batch.add(() => bump.get("a")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    for (const r of results) expect((r as PromiseRejectedResult).reason.message).toBe("disk I/O error");
    expect(count("a")).toBe(0);
    // The next turn's batch works.
    expect(await batch.add(() => bump.get("a"))).toBe(1);
  });

  it("fails the whole batch with SQLITE_BUSY while another connection holds the write lock, and works after", async () => {
    const { db, path, bump, count } = open();
    db.pragma("busy_timeout = 0");
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    const batch = writeBatch(db);
    const results = await Promise.allSettled([batch.add(() => bump.get("a")), batch.add(() => bump.get("b"))]);
    for (const r of results) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_BUSY" });
    other.exec("COMMIT");
    other.close();
    expect(await Promise.all([batch.add(() => bump.get("a")), batch.add(() => bump.get("b"))])).toEqual([1, 1]);
    expect(count("a") + count("b")).toBe(2);
  });
});
