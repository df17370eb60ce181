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
`;
