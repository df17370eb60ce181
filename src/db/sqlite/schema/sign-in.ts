// Migration 15: sign-in keys and methods of issue 42 part B.
export const signInSchema = `
-- Each app's access-token signing keys (Ed25519). The private key is sealed under the server
-- key, bound to its app and key id; a retired key still verifies until every token it signed
-- has expired, then is dropped at the app's next rotation.
CREATE TABLE signing_keys (
  kid TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  public_key TEXT NOT NULL,
  private_key_sealed TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  retired_at INTEGER
);
-- One signing key per app at a time: two nodes creating an app's first key at once keep one.
CREATE UNIQUE INDEX signing_keys_current ON signing_keys(app_id) WHERE retired_at IS NULL;


-- Email sign-in (a 6-digit code and a link in one email). Both kept as hashes: the link's
-- SHA-256, the code's HMAC under a server-derived key (a 6-digit code's plain hash is
-- reversed by trying all of them). A newer request for the same address replaces the older.
CREATE TABLE email_sign_ins (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  link_hash TEXT NOT NULL UNIQUE,
  code_hash TEXT NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE INDEX email_sign_ins_email ON email_sign_ins(app_id, email);
CREATE INDEX email_sign_ins_expires ON email_sign_ins(expires_at);

-- Tenants made by POST /auth/anonymous, until they upgrade (the row goes) or are cleaned up.
CREATE TABLE anonymous_tenants (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  created_at INTEGER NOT NULL
);
CREATE INDEX anonymous_tenants_app ON anonymous_tenants(app_id, created_at);
`;
