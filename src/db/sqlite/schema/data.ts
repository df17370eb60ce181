// Records of every app live in one table; each query pins app, tenant and collection.
// `seq` is the rowid: it breaks sort ties (creation order) and rides along in every index
// for free. Per-field expression indexes are built at runtime from app settings
// (src/db/sqlite/record-indexes.ts, synced by src/data/install.ts), not here.
export const dataSchema = `
CREATE TABLE records (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  collection TEXT NOT NULL,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
-- Leads with tenant_id so the tenant ON DELETE CASCADE finds the rows without a scan.
CREATE INDEX records_list ON records(tenant_id, app_id, collection, created_at);

-- Share links: only the SHA-256 of the token is kept. Revoking deletes the rows.
CREATE TABLE share_links (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  record_id TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER
);
CREATE INDEX share_links_record ON share_links(record_id);
`;
