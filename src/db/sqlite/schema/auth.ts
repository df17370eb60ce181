export const authSchema = `
CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  password_hash TEXT,
  email_verified_at INTEGER,
  locale TEXT NOT NULL DEFAULT 'en',
  parent_tenant_id TEXT REFERENCES tenants(id) ON DELETE SET NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (app_id, email)
);
CREATE INDEX tenants_parent ON tenants(parent_tenant_id) WHERE parent_tenant_id IS NOT NULL;

-- One row per sign-in. Access tokens name the session, so ending it refuses them at once.
CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  ended_at INTEGER,
  end_reason TEXT
);
CREATE INDEX sessions_tenant ON sessions(tenant_id);

-- Every refresh token issued, hashed. A used one is marked rotated; presenting it again
-- after the grace window is reuse and ends the session.
CREATE TABLE refresh_tokens (
  token_hash TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  created_at INTEGER NOT NULL,
  rotated_at INTEGER
);
CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);

-- Single-use email tokens (verification, password reset), stored hashed. Issuing a new
-- token of a purpose drops the tenant's older ones of that purpose.
CREATE TABLE email_tokens (
  token_hash TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  purpose TEXT NOT NULL CHECK (purpose IN ('verify', 'reset')),
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE INDEX email_tokens_tenant ON email_tokens(tenant_id, purpose);

-- Development outbox: every email the server would send, with its link.
CREATE TABLE outbox (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  locale TEXT NOT NULL,
  to_address TEXT NOT NULL,
  subject TEXT NOT NULL,
  text_body TEXT NOT NULL,
  html_body TEXT NOT NULL,
  link TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX outbox_app ON outbox(app_id, created_at);
`;
