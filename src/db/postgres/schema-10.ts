// Migration 10: the audit trail (src/audit) and scheduled job runs (src/server-hooks/cron.ts).
// No foreign keys: an app's or tenant's deletion is itself an entry. Appends lock the app's
// head row (SELECT … FOR UPDATE), so nodes never fork a chain; the head keeps the hash of the
// last pruned entry so the kept chain still verifies. Details stay TEXT: the hash covers
// their exact text, which JSONB would reorder.
export const auditCronSchema = `
CREATE TABLE audit_log (
  app_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  id TEXT NOT NULL UNIQUE,
  at BIGINT NOT NULL,
  actor_type TEXT NOT NULL,
  actor_id TEXT,
  action TEXT NOT NULL,
  tenant_id TEXT,
  target TEXT,
  ip TEXT,
  client TEXT,
  request_id TEXT,
  details TEXT,
  prev_hash TEXT NOT NULL,
  hash TEXT NOT NULL,
  PRIMARY KEY (app_id, seq)
);
CREATE INDEX audit_log_tenant ON audit_log(app_id, tenant_id, seq);
CREATE INDEX audit_log_action ON audit_log(app_id, action, seq);
CREATE INDEX audit_log_age ON audit_log(app_id, at);
CREATE TABLE audit_heads (
  app_id TEXT PRIMARY KEY,
  seq BIGINT NOT NULL,
  hash TEXT NOT NULL,
  pruned_seq BIGINT NOT NULL,
  pruned_hash TEXT NOT NULL
);
CREATE TABLE cron_runs (
  name TEXT NOT NULL,
  slot BIGINT NOT NULL,
  node TEXT NOT NULL,
  started_at BIGINT NOT NULL,
  finished_at BIGINT,
  status TEXT NOT NULL,
  error TEXT,
  PRIMARY KEY (name, slot)
);
CREATE INDEX cron_runs_age ON cron_runs(started_at);
`;
