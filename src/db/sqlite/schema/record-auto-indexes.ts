// What tenantd knows about the automatic indexes it built for undeclared filter fields
// (src/db/sqlite/record-auto-indexes.ts): one row per index, for the admin view and the
// drop of unused ones. IF NOT EXISTS: databases from before this migration made it at runtime.
export const recordAutoIndexesSchema = `
CREATE TABLE IF NOT EXISTS record_auto_indexes (
  name TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  collection TEXT NOT NULL,
  path TEXT NOT NULL,
  rows INTEGER NOT NULL,
  build_ms INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER NOT NULL,
  UNIQUE (app_id, collection, path)
);
`;
