// Migration 13: the answers of writes sent with an Idempotency-Key (src/data/idempotency.ts).
// One row per tenant and key, the key stored as its SHA-256: a retry within 24 hours gets
// the first answer back. Written in the same transaction as the write it answers, so a row
// exists exactly when its write committed. Rows past 24 hours are dropped by housekeeping.
export const idempotencySchema = `
CREATE TABLE idempotency_keys (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  key_hash TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  status INTEGER NOT NULL,
  body TEXT,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, app_id, key_hash)
);
CREATE INDEX idempotency_keys_age ON idempotency_keys(created_at);
`;
