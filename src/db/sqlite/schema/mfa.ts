export const mfaSchema = `
-- When the session's tenant last proved who it is, and how (step-up reads it; a session
-- without one was authenticated when it was created, by password).
ALTER TABLE sessions ADD COLUMN authenticated_at INTEGER;
ALTER TABLE sessions ADD COLUMN auth_methods TEXT;

-- A tenant's TOTP secret, sealed. confirmed_at is null while enrolment waits for its first
-- code; last_step is the newest time step accepted, so no code is accepted twice.
CREATE TABLE tenant_totp (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  confirmed_at INTEGER,
  last_step INTEGER,
  created_at INTEGER NOT NULL
);

-- Single-use recovery codes, hashed.
CREATE TABLE recovery_codes (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  code_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  used_at INTEGER,
  PRIMARY KEY (tenant_id, code_hash)
);

-- WebAuthn credentials; the credential id is unique within an app (its relying party).
CREATE TABLE passkeys (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  credential_id TEXT NOT NULL,
  public_key TEXT NOT NULL,
  counter INTEGER NOT NULL,
  transports TEXT,
  name TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  UNIQUE (app_id, credential_id)
);
CREATE INDEX passkeys_tenant ON passkeys(tenant_id);

-- Short-lived single-use values, hashed: MFA tickets and WebAuthn challenges.
CREATE TABLE auth_challenges (
  hash TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  tenant_id TEXT REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  data TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE INDEX auth_challenges_expires ON auth_challenges(expires_at);
`;
