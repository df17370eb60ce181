// Migration 19: the realtime change feed (src/realtime, docs/realtime.md). A record write of
// an app with live subscribers appends its change here in the write's own transaction; the
// process tails the table by `seq`. Rows live for the retention window;
// `realtime_feed.pruned_through` says which resume positions can no longer be replayed.
// Tickets are the one-use query-string credentials of EventSource.
export const realtimeSchema = `
CREATE TABLE realtime_changes (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  collection TEXT,
  record_id TEXT,
  data TEXT,
  before TEXT,
  at INTEGER NOT NULL
);
CREATE INDEX realtime_changes_tenant ON realtime_changes (tenant_id, app_id, seq);
CREATE INDEX realtime_changes_at ON realtime_changes (at);
CREATE TABLE realtime_feed (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  pruned_through INTEGER NOT NULL
);
INSERT INTO realtime_feed (id, pruned_through) VALUES (1, 0);
CREATE TABLE realtime_tickets (
  hash TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  session_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
`;
