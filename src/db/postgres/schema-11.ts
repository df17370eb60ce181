// Migration 11: the answers of writes sent with an Idempotency-Key, and the full-text index
// of records, as SQLite's migration 13
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

-- Full-text search (src/data/text.ts): the words of each record of a collection with search
-- on, made in JavaScript and stored as they are (array_to_tsvector: no parser, no
-- dictionary), so both engines hold the same words.
CREATE TABLE record_search (
  seq BIGINT PRIMARY KEY REFERENCES records(seq) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  collection TEXT NOT NULL,
  lang TEXT NOT NULL,
  tsv TSVECTOR NOT NULL,
  fields JSONB NOT NULL
);
CREATE INDEX record_search_words ON record_search USING GIN (tsv);
CREATE INDEX record_search_scope ON record_search (app_id, collection);
`;
