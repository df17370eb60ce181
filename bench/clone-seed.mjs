// Seeds tenantd's records straight into SQLite without knowing its schema in advance: the
// parent makes one record through the API, and this finds that record's row and copies it
// with a new id, tenant, data and timestamps. Whatever else the row holds (app id,
// collection, version…) is copied as is, and triggers the data area defines still fire.
// The parent then checks through the API that the list filters count the seeded rows.
import { recordData, seedTime } from "./dataset.mjs";

const quote = (name) => `"${name.replaceAll('"', '""')}"`;
const RECENT_MS = 24 * 3_600_000;

function tables(db) {
  return db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND sql NOT LIKE 'CREATE VIRTUAL%'")
    .pluck()
    .all();
}
// An INTEGER PRIMARY KEY is the rowid: left out of the copies, so SQLite numbers them.
const columnsOf = (db, table) =>
  db
    .pragma(`table_info(${quote(table)})`)
    .filter((c) => !(c.pk === 1 && c.type.toUpperCase() === "INTEGER"))
    .map((c) => c.name);

/** The table and row whose `id` column holds `id`. */
function findRow(db, id) {
  for (const table of tables(db)) {
    const columns = columnsOf(db, table);
    if (!columns.includes("id")) continue;
    const row = db.prepare(`SELECT * FROM ${quote(table)} WHERE id = ?`).get(id);
    if (row) return { table, columns, row };
  }
  throw new Error(`seed: no table holds a row with id ${id}`);
}

/** Tables other than `except` with a column equal to `value` (side tables a copy would miss). */
function referencingTables(db, value, except) {
  const found = [];
  for (const table of tables(db)) {
    if (table === except) continue;
    for (const c of columnsOf(db, table)) {
      if (db.prepare(`SELECT 1 FROM ${quote(table)} WHERE ${quote(c)} = ? LIMIT 1`).get(value)) found.push(`${table}.${c}`);
    }
  }
  return found;
}

// One sequence for every seeding call of the process, so two datasets never share an id.
let seq = 0;
/** Ids shaped like the template's (same prefix and length): prefix + tag + a base-32 sequence number. */
function idMaker(templateId, tag) {
  const cut = templateId.lastIndexOf("_");
  const prefix = cut > 0 ? templateId.slice(0, cut + 1) : "";
  const width = Math.max(12, templateId.length - prefix.length);
  return () => prefix + (tag + (seq++).toString(32)).padStart(width, "0");
}

function inserter(db, table, columns) {
  const stmt = db.prepare(`INSERT INTO ${quote(table)} (${columns.map(quote).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`);
  const batch = db.transaction((rows) => {
    for (const r of rows) stmt.run(r);
  });
  return (rows) => {
    for (let i = 0; i < rows.length; i += 20_000) batch(rows.slice(i, i + 20_000));
  };
}

/**
 * `recordId` (data = recordData(0)) of tenant `tenantId` is the template. With `count`, the
 * tenant gets records 1..count-1. With `spread`, `spread.realTenantIds` (the template's tenant
 * first) and synthetic tenants up to `spread.tenants` get `spread.perTenant` records each.
 */
export function cloneSeed(db, { recordId, tenantId, count, spread }) {
  const started = Date.now();
  const now = Date.now();
  const rec = findRow(db, recordId);
  const tenantCols = rec.columns.filter((c) => rec.row[c] === tenantId);
  const dataCol = rec.columns.find((c) => {
    if (typeof rec.row[c] !== "string" || !rec.row[c].startsWith("{")) return false;
    try {
      return JSON.parse(rec.row[c]).title === recordData(0).title;
    } catch {
      return false;
    }
  });
  const timeCols = rec.columns.filter((c) => typeof rec.row[c] === "number" && Math.abs(rec.row[c] - now) < RECENT_MS);
  if (tenantCols.length === 0 || !dataCol) {
    throw new Error(`seed: cannot tell the tenant and data columns of ${rec.table} (${rec.columns.join(", ")})`);
  }
  const warnings = referencingTables(db, recordId, rec.table).map((t) => `record id also appears in ${t}: that side table is not seeded`);
  const insertRecords = inserter(db, rec.table, rec.columns);
  const newRecordId = idMaker(recordId, "b");
  let made = 0;
  const recordRow = (tenant, i, at) =>
    rec.columns.map((c) => {
      if (c === "id") {
        made++;
        return newRecordId();
      }
      if (tenantCols.includes(c)) return tenant;
      if (c === dataCol) return JSON.stringify(recordData(i));
      if (timeCols.includes(c)) return at;
      return rec.row[c];
    });

  // Made and written 100,000 rows at a time, as the baseline seeds: all 1,000,000 at once
  // left this server's heap at 800 MB, and its collection slowed every later scenario.
  for (let from = 1; from < (count ?? 0); from += 100_000) {
    const rows = [];
    for (let i = from; i < Math.min(count, from + 100_000); i++) rows.push(recordRow(tenantId, i, seedTime(i, count)));
    insertRecords(rows);
  }
  if (spread) {
    const tenantIds = [...spread.realTenantIds, ...syntheticTenants(db, tenantId, spread.tenants - spread.realTenantIds.length)];
    const total = tenantIds.length * spread.perTenant;
    for (let i = 0; i < spread.perTenant; i++) {
      const rows = [];
      tenantIds.forEach((t, k) => {
        if (i === 0 && t === tenantId) return; // the template itself
        rows.push(recordRow(t, i, seedTime(i * tenantIds.length + k, total)));
      });
      insertRecords(rows);
    }
  }
  // A running server would have checkpointed long ago: do not make the load read a huge WAL.
  db.pragma("wal_checkpoint(TRUNCATE)");
  return { table: rec.table, rows: made, ms: Date.now() - started, warnings };
}

/** Copies of the template tenant's row with new ids and emails; returns their ids. */
function syntheticTenants(db, tenantId, n) {
  const t = findRow(db, tenantId);
  const emailCol = t.columns.find((c) => typeof t.row[c] === "string" && t.row[c].includes("@"));
  const newId = idMaker(tenantId, "s");
  const ids = [];
  const rows = [];
  for (let i = 0; i < n; i++) {
    const id = newId();
    ids.push(id);
    rows.push(t.columns.map((c) => (c === "id" ? id : c === emailCol ? `seed${i}@bench.invalid` : t.row[c])));
  }
  inserter(db, t.table, t.columns)(rows);
  return ids;
}
