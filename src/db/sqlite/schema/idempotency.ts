// Migration 13: the answers of writes sent with an Idempotency-Key (src/data/idempotency.ts),
// and the full-text index of records.
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

-- Full-text search (src/data/text.ts): one row per record of a collection with search on,
-- rowid = records.seq. The words are made in JavaScript, so the tokenizer only splits them
-- again at the spaces between them (no diacritics folding of its own). app_id, collection
-- and lang let a settings change find what to drop or rebuild.
CREATE VIRTUAL TABLE records_fts USING fts5(text, fields UNINDEXED, app_id UNINDEXED, collection UNINDEXED, lang UNINDEXED, tokenize = 'unicode61 remove_diacritics 0');
CREATE TRIGGER records_fts_removed AFTER DELETE ON records BEGIN DELETE FROM records_fts WHERE rowid = OLD.seq; END;
`;
