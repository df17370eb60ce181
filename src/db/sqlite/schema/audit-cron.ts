// The audit trail (src/audit) and scheduled job runs (src/server-hooks/cron.ts). No foreign
// keys: an app's or tenant's deletion is itself an entry, and the trail outlives them until
// retention drops it. The head row per app is what appends serialize on, and it keeps the
// hash of the last pruned entry so the kept chain still verifies.
export const auditCronSchema = `
CREATE TABLE audit_log (
  app_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  id TEXT NOT NULL UNIQUE,
  at INTEGER NOT NULL,
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
) WITHOUT ROWID;
CREATE INDEX audit_log_tenant ON audit_log(app_id, tenant_id, seq);
CREATE INDEX audit_log_action ON audit_log(app_id, action, seq);
CREATE INDEX audit_log_age ON audit_log(app_id, at);
CREATE TABLE audit_heads (
  app_id TEXT PRIMARY KEY,
  seq INTEGER NOT NULL,
  hash TEXT NOT NULL,
  pruned_seq INTEGER NOT NULL,
  pruned_hash TEXT NOT NULL
);
CREATE TABLE cron_runs (
  name TEXT NOT NULL,
  slot INTEGER NOT NULL,
  node TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  status TEXT NOT NULL,
  error TEXT,
  PRIMARY KEY (name, slot)
);
CREATE INDEX cron_runs_age ON cron_runs(started_at);
`;
