// Migration 3: the state several tenantd nodes on one database must share.
//
// Rate-limit windows and sign-in failures are counters, not data: UNLOGGED skips the
// write-ahead log (each check is one small upsert on a hot row), at the price that a
// database crash or a failover to a replica empties them, which only forgets who was
// being slowed down. Maintenance runs remember when each job last ran anywhere.
export const sharedStateSchema = `
CREATE UNLOGGED TABLE rate_windows (
  key TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  reset_at BIGINT NOT NULL
);
CREATE INDEX rate_windows_reset ON rate_windows(reset_at);

CREATE UNLOGGED TABLE login_failures (
  key TEXT PRIMARY KEY,
  count INTEGER NOT NULL,
  last_at BIGINT NOT NULL
);
CREATE INDEX login_failures_last ON login_failures(last_at);

CREATE TABLE maintenance_runs (
  name TEXT PRIMARY KEY,
  ran_at BIGINT NOT NULL
);
`;
