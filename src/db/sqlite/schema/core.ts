// Times are integer milliseconds since the epoch (UTC); the HTTP layer turns them into ISO strings.
export const coreSchema = `
CREATE TABLE server_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE developers (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL
);

CREATE TABLE developer_sessions (
  token_hash TEXT PRIMARY KEY,
  developer_id TEXT NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX developer_sessions_developer ON developer_sessions(developer_id);

CREATE TABLE apps (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  publishable_key TEXT NOT NULL UNIQUE,
  -- SHA-256 of the app's server-side secret key (x-service-secret), when one was issued.
  secret_key_hash TEXT,
  owner_id TEXT REFERENCES developers(id) ON DELETE SET NULL,
  settings TEXT NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE INDEX apps_owner ON apps(owner_id);
`;
