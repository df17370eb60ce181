export const oauthSchema = `
-- A provider account linked to a tenant. The provider's account id is the identity;
-- the email is what the provider said at the last sign-in (shown to the tenant).
CREATE TABLE oauth_accounts (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  provider_account_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email TEXT,
  email_verified INTEGER NOT NULL DEFAULT 0,
  linked_at INTEGER NOT NULL,
  last_login_at INTEGER NOT NULL,
  PRIMARY KEY (app_id, provider, provider_account_id)
);
CREATE INDEX oauth_accounts_tenant ON oauth_accounts(tenant_id);

-- One row per started sign-in: the state is stored hashed, the PKCE verifier and the invite
-- token sealed, and the browser that started it is named by the hash of a cookie.
CREATE TABLE oauth_states (
  state_hash TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  redirect_url TEXT NOT NULL,
  invite_token TEXT,
  code_verifier TEXT,
  browser_hash TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE INDEX oauth_states_expires ON oauth_states(expires_at);
`;
