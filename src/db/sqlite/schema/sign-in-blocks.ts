// Migration 18: tenants whose sign-in the app's developer turned off (the dashboard's
// "Disable sign-in"). A row is the state; deleting it turns sign-in back on.
export const signInBlocksSchema = `
CREATE TABLE tenant_sign_in_blocks (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  disabled_at INTEGER NOT NULL
);
`;
