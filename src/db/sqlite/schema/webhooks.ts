// Outgoing webhooks: one endpoint per app, a queue of events not yet sent, and the log.
export const webhooksSchema = `
-- The app's endpoint. The signing secret is sealed with the server key (it must be read
-- back to sign), never stored in plain text.
CREATE TABLE webhook_configs (
  app_id TEXT PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  secret_created_at INTEGER NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);

-- Events raised but not yet claimed by the dispatcher. A row leaves this table in the same
-- transaction that writes its delivery row, so an event is sent at most once. No foreign key
-- to tenants: a tenant.deleted event outlives its tenant. data holds the sealed
-- { email, payload } (a verification token or an email must not sit in plain text).
CREATE TABLE webhook_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  tenant_id TEXT,
  data TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

-- The delivery log, one row per event. status 'sending' while the request is in flight;
-- then 'delivered', 'failed' or 'invalid_config'. created_at is when the event fired.
CREATE TABLE webhook_deliveries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  tenant_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('sending', 'delivered', 'failed', 'invalid_config')),
  url TEXT,
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER,
  created_at INTEGER NOT NULL,
  claimed_at INTEGER NOT NULL,
  finished_at INTEGER
);
CREATE INDEX webhook_deliveries_app ON webhook_deliveries(app_id, created_at);
CREATE INDEX webhook_deliveries_sending ON webhook_deliveries(claimed_at) WHERE status = 'sending';
`;
