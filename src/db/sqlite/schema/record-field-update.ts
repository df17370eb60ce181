// Migration 25: a record update rewrites its per-field index entries (schema 17) only where
// they change. The trigger of schema 17 deleted and re-inserted every entry of the record on
// every update, so an update that left the indexed fields alone (the common one: an upsert
// on its unique key, a counter bump) still rewrote each index b-tree twice.
//
// An entry is the record's (tenant, value type, value) at the index's path; `rec_created`
// never changes and `ix` depends only on the app and collection, which an update never
// changes. An unchanged entry either exists already or is still ahead of its index's build
// (build_to), which copies it: skipping it loses nothing. INSERT OR REPLACE on the entry's
// key (ix, rec_seq) replaces a changed one, so the DELETE the old trigger ran first is not
// needed. The rank CASE is schema 17's, written out: a migration never changes once released.
const rank = (row: string) =>
  `CASE json_type(${row}.data, i.json_path) WHEN 'integer' THEN 2 WHEN 'real' THEN 2 WHEN 'text' THEN 3 WHEN 'object' THEN 4 WHEN 'array' THEN 5 WHEN 'true' THEN 6 WHEN 'false' THEN 6 ELSE 1 END`;

export const recordFieldUpdateSchema = `
DROP TRIGGER record_field_update;
CREATE TRIGGER record_field_update AFTER UPDATE ON records
  WHEN EXISTS (SELECT 1 FROM record_field_indexes WHERE app_id = NEW.app_id AND collection = NEW.collection)
BEGIN
  INSERT OR REPLACE INTO record_field_entries (ix, rec_seq, rec_tenant, rank, value, rec_created)
    SELECT i.ix, NEW.seq, NEW.tenant_id, ${rank("NEW")}, json_extract(NEW.data, i.json_path), NEW.created_at
    FROM record_field_indexes i
    WHERE i.app_id = NEW.app_id AND i.collection = NEW.collection
      AND (NEW.tenant_id IS NOT OLD.tenant_id
        OR json_type(NEW.data, i.json_path) IS NOT json_type(OLD.data, i.json_path)
        OR json_extract(NEW.data, i.json_path) IS NOT json_extract(OLD.data, i.json_path));
END;
`;
