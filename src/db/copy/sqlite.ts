import type Database from "better-sqlite3";
import { openDatabase, type SqliteDb } from "../sqlite/connection.ts";
import { deferredColumns, type CopyEnd } from "./end.ts";
import type { CopyTable, CopyValue } from "./tables.ts";

const orderOf = (table: CopyTable) => (table.engineOrder ? [table.engineOrder.sqlite] : table.key);
const list = (columns: string[]) => columns.map((c) => `"${c}"`).join(", ");
const marks = (n: number) => Array.from({ length: n }, () => "?").join(", ");

/** SQLite keeps booleans as 0/1 and reads integers as bigint here (exact past 2^53). */
function fromSqlite(table: CopyTable, columns: string[], row: unknown[]): CopyValue[] {
  return columns.map((c, i) => {
    const v = row[i] as CopyValue | number;
    if (v === null) return null;
    if (table.columns[c] === "bool") return v !== 0n && v !== 0;
    if (typeof v === "number") return Number.isInteger(v) ? BigInt(v) : String(v);
    return v;
  });
}

const toSqlite = (v: CopyValue) => (v === true ? 1n : v === false ? 0n : v);

/**
 * A SQLite data directory's database as one end of a copy, on a connection of its own
 * (opened and migrated as every tenantd process opens it). As the source it reads inside one
 * read transaction: a server writing meanwhile does not tear the copy.
 */
export function openSqliteCopyEnd(databasePath: string, label: string): CopyEnd {
  const db: SqliteDb = openDatabase(databasePath);
  const prepared = new Map<string, Database.Statement<unknown[]>>();
  const stmt = (sql: string) => {
    let s = prepared.get(sql);
    if (!s) prepared.set(sql, (s = db.prepare<unknown[]>(sql)));
    return s;
  };
  const read = (sql: string, params: unknown[]) => stmt(sql).safeIntegers(true).raw(true).all(...params) as unknown[][];

  return {
    engine: "sqlite",
    label,
    async snapshot() {
      db.exec("BEGIN");
      // The snapshot starts at the first read, not at BEGIN.
      db.prepare("SELECT COUNT(*) FROM server_meta").get();
    },
    async count(table) {
      return Number(db.prepare(`SELECT COUNT(*) FROM "${table.name}"`).pluck().get());
    },
    async page(table, after, limit, opts = {}) {
      const order = opts.deferredOnly ? table.key : orderOf(table);
      const columns = opts.deferredOnly ? deferredColumns(table) : Object.keys(table.columns);
      const where = [after ? `(${list(order)}) > (${marks(order.length)})` : "", ...(opts.deferredOnly ? (table.deferred ?? []).map((c) => `"${c}" IS NOT NULL`) : [])].filter(Boolean);
      const sql = `SELECT ${list(order)}, ${list(columns)} FROM "${table.name}"${where.length ? ` WHERE ${where.join(" AND ")}` : ""} ORDER BY ${list(order)} LIMIT ?`;
      const raw = read(sql, [...(after ?? []), limit]);
      const rows = raw.map((r) => fromSqlite(table, columns, r.slice(order.length)));
      const last = raw.at(-1);
      return { rows, cursor: last ? (last.slice(0, order.length) as CopyValue[]) : null };
    },
    async insert(table, rows) {
      const columns = Object.keys(table.columns);
      const deferred = new Set(table.deferred ?? []);
      const s = stmt(`INSERT INTO "${table.name}" (${list(columns)}) VALUES (${marks(columns.length)})`);
      db.transaction(() => {
        for (const row of rows) s.run(...row.map((v, i) => (deferred.has(columns[i]!) ? null : toSqlite(v))));
      }).immediate();
    },
    async setDeferred(table, rows) {
      const deferred = table.deferred ?? [];
      const s = stmt(`UPDATE "${table.name}" SET ${deferred.map((c) => `"${c}" = ?`).join(", ")} WHERE (${list(table.key)}) = (${marks(table.key.length)})`);
      const k = table.key.length;
      db.transaction(() => {
        for (const row of rows) s.run(...row.slice(k).map(toSqlite), ...row.slice(0, k).map(toSqlite));
      }).immediate();
    },
    async finishTable() {
      // INTEGER PRIMARY KEY and AUTOINCREMENT counters follow the largest value inserted.
    },
    async empty(tables) {
      db.transaction(() => {
        for (const table of [...tables].reverse()) db.exec(`DELETE FROM "${table.name}"`);
      }).immediate();
    },
    async getMeta(key) {
      return (db.prepare("SELECT value FROM server_meta WHERE key = ?").pluck().get(key) as string | undefined) ?? null;
    },
    async setMeta(key, value) {
      if (value === null) db.prepare("DELETE FROM server_meta WHERE key = ?").run(key);
      else db.prepare("INSERT INTO server_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
    },
    async close() {
      if (db.inTransaction) db.exec("ROLLBACK");
      db.close();
    },
  };
}

/** The tables and columns this SQLite database has (for the check that COPY_TABLES covers them). */
export function sqliteColumns(databasePath: string): Record<string, string[]> {
  const db = openDatabase(databasePath);
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    return Object.fromEntries(tables.map((t) => [t, (db.prepare(`SELECT name FROM pragma_table_info(?)`).pluck().all(t) as string[])]));
  } finally {
    db.close();
  }
}
