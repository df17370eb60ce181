// File metadata; the bytes live in unstorage under `pathname`, a key the server builds from ids.
export const filesSchema = `
CREATE TABLE files (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  pathname TEXT NOT NULL UNIQUE,
  size_bytes INTEGER NOT NULL,
  mime_type TEXT NOT NULL,
  original_filename TEXT,
  sha256 TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
-- Covers the per-tenant quota sum and the per-app usage sum without touching the table.
CREATE INDEX files_tenant_size ON files(app_id, tenant_id, size_bytes);
-- Pages through an app's files by id when the app is deleted.
CREATE INDEX files_app_id ON files(app_id, id);
`;
