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
`;
