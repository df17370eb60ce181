import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSessionStateCache } from "../dist/db/session-state-cache.js";
const db = new Database(join(mkdtempSync(join(tmpdir(), "ssc-")), "x.db"));
db.pragma("journal_mode = WAL");
db.exec("CREATE TABLE sessions (id TEXT PRIMARY KEY, tenant_id TEXT, app_id TEXT, created_at INTEGER, expires_at INTEGER, ended_at INTEGER, end_reason TEXT)");
const ins = db.prepare("INSERT INTO sessions VALUES (?, 't', 'a', 1, 9e15, NULL, NULL)");
for (let i = 0; i < 1000; i++) ins.run("s" + i);
const read = db.prepare("SELECT id, tenant_id, app_id, expires_at, ended_at FROM sessions WHERE id = ?");
const cache = createSessionStateCache(db);
const dv = db.prepare("PRAGMA data_version").pluck();
for (const round of [1, 2]) {
  const n = 300000;
  let t0 = performance.now();
  for (let i = 0; i < n; i++) read.get("s" + (i % 1000));
  console.log("query µs", ((performance.now() - t0) * 1000 / n).toFixed(2));
  t0 = performance.now();
  for (let i = 0; i < n; i++) cache.get("s" + (i % 1000));
  console.log("cache µs", ((performance.now() - t0) * 1000 / n).toFixed(2));
  t0 = performance.now();
  for (let i = 0; i < n; i++) dv.get();
  console.log("data_version µs", ((performance.now() - t0) * 1000 / n).toFixed(2));
}
