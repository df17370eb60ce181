// Migration 7: the answers of writes sent with an Idempotency-Key, as SQLite's migration 13
// (src/db/sqlite/schema/idempotency.ts): written in the write's own transaction, dropped by
// housekeeping after 24 hours.
export const idempotencySchema = `
CREATE TABLE idempotency_keys (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT,
  created_at BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, app_id, key_hash)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);
`;
