// Migration 9: sign-in keys and methods of issue 42 part B (SQLite's migration 15).
export const signInSchema = `
CREATE TABLE signing_keys (
  kid TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  public_key TEXT NOT NULL,
  private_key_sealed TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  retired_at BIGINT
);
CREATE UNIQUE INDEX signing_keys_current ON signing_keys(app_id) WHERE retired_at IS NULL;


CREATE TABLE email_sign_ins (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  link_hash TEXT NOT NULL UNIQUE,
  code_hash TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX email_sign_ins_email ON email_sign_ins(app_id, email);
CREATE INDEX email_sign_ins_expires ON email_sign_ins(expires_at);

CREATE TABLE anonymous_tenants (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX anonymous_tenants_app ON anonymous_tenants(app_id, created_at);
`;
