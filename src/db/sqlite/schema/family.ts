// Invite tokens and family plans. Tokens are stored as SHA-256 hashes; the plaintext is shown once.
export const familySchema = `
-- Invite tokens a tenant hands out. used_by_tenant_id records who signed up with one; it is
-- cleared (not the row) when that tenant is deleted, so the inviter's quota stays spent.
CREATE TABLE invite_tokens (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  note TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  used_by_tenant_id TEXT REFERENCES tenants(id) ON DELETE SET NULL
);
CREATE INDEX invite_tokens_tenant ON invite_tokens(tenant_id, created_at);
CREATE INDEX invite_tokens_used_by ON invite_tokens(used_by_tenant_id) WHERE used_by_tenant_id IS NOT NULL;

-- Family invites of an owner (tenant_id). A used one names the member it brought in.
CREATE TABLE family_invites (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  note TEXT,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER,
  used_by_tenant_id TEXT REFERENCES tenants(id) ON DELETE SET NULL
);
CREATE INDEX family_invites_tenant ON family_invites(tenant_id, created_at);
CREATE INDEX family_invites_used_by ON family_invites(used_by_tenant_id) WHERE used_by_tenant_id IS NOT NULL;

-- One row per member (tenant_id), kept in step with tenants.parent_tenant_id (which access
-- tokens read). joined_at orders members when the owner's seats shrink below their number.
CREATE TABLE family_members (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  owner_tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  joined_at INTEGER NOT NULL
);
CREATE INDEX family_members_owner ON family_members(owner_tenant_id, joined_at, tenant_id);
`;
