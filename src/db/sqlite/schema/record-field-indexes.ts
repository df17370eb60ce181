// Per-field record indexes kept beside `records` (src/db/sqlite/record-field-index.ts) instead
// of SQLite expression indexes on it: CREATE INDEX scans every app's rows under the write
// lock, so one app's index stalled every other app's writes (issue 39). An index here is
// filled in short chunks and kept current by triggers, and its build reads a bounded range
// of rows per step. `ix` is never reused (AUTOINCREMENT): entries of a dropped index are
// deleted in chunks after its row is gone (record_field_drops), and a new index never sees them.
//
// `build_to` is the highest seq the build still has to copy (NULL once ready); rows above it,
// and rows written during the build, come through the triggers. The rank CASE is rankSql()
// of records-sql.ts, written out: a migration never changes once released.
const rank = (row: string) =>
  `CASE json_type(${row}.data, i.json_path) WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'true' THEN 6 WHEN 'false' THEN 6 ELSE 1 END`;
const entriesOf = (row: string) =>
  `INSERT OR REPLACE INTO record_field_entries (ix, rec_seq, rec_tenant, rank, value, rec_created)
    SELECT i.ix, ${row}.seq, ${row}.tenant_id, ${rank(row)}, json_extract(${row}.data, i.json_path), ${row}.created_at
    FROM record_field_indexes i WHERE i.app_id = ${row}.app_id AND i.collection = ${row}.collection;`;
const hasIndex = (row: string) => `EXISTS (SELECT 1 FROM record_field_indexes WHERE app_id = ${row}.app_id AND collection = ${row}.collection)`;
const dropEntries = `DELETE FROM record_field_entries WHERE rec_seq = OLD.seq AND ix IN (SELECT ix FROM record_field_indexes WHERE app_id = OLD.app_id AND collection = OLD.collection);`;

export const recordFieldIndexesSchema = `
CREATE TABLE record_field_indexes (
  ix INTEGER PRIMARY KEY AUTOINCREMENT,
  app_id TEXT NOT NULL,
  collection TEXT NOT NULL,
  path TEXT NOT NULL,
  json_path TEXT NOT NULL,
  declared INTEGER NOT NULL,
  build_to INTEGER,
  build_from INTEGER NOT NULL DEFAULT 0,
  rows INTEGER NOT NULL DEFAULT 0,
  build_ms INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  UNIQUE (app_id, collection, path)
);
-- value has no declared type: no affinity, so '1' and 1 stay apart as in json_extract().
CREATE TABLE record_field_entries (
  ix INTEGER NOT NULL,
  rec_seq INTEGER NOT NULL,
  rec_tenant TEXT NOT NULL,
  rank INTEGER NOT NULL,
  value,
  rec_created INTEGER NOT NULL,
  PRIMARY KEY (ix, rec_seq)
) WITHOUT ROWID;
CREATE INDEX record_field_entries_value ON record_field_entries (ix, rec_tenant, rank, value, rec_created);
CREATE TABLE record_field_drops (ix INTEGER PRIMARY KEY);

CREATE TRIGGER record_field_insert AFTER INSERT ON records WHEN ${hasIndex("NEW")}
BEGIN
  ${entriesOf("NEW")}
END;
CREATE TRIGGER record_field_update AFTER UPDATE ON records WHEN ${hasIndex("OLD")} OR ${hasIndex("NEW")}
BEGIN
  ${dropEntries}
  ${entriesOf("NEW")}
END;
CREATE TRIGGER record_field_delete AFTER DELETE ON records WHEN ${hasIndex("OLD")}
BEGIN
  ${dropEntries}
END;

-- The automatic indexes built before are built again here; their expression indexes are
-- dropped at startup (records.ts dropIndexesExcept), the declared ones rebuilt from settings.
INSERT INTO record_field_indexes (app_id, collection, path, json_path, declared, build_to, created_at, last_used_at)
  SELECT app_id, collection, path, '$."' || replace(path, '.', '"."') || '"', 0, (SELECT COALESCE(MAX(seq), 0) FROM records), created_at, last_used_at
  FROM record_auto_indexes;
DROP TABLE record_auto_indexes;
`;
