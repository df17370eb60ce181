// Migration 14: organizations, their members and their invites (docs/organizations.md).
export const orgsSchema = `
CREATE TABLE orgs (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL DEFAULT 'team',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX orgs_app ON orgs(app_id, created_at);

-- role is owner, admin, member or one of the app's custom roles (settings.orgs.roles).
-- joined_at, tenant_id is the members list's order and its cursor.
CREATE TABLE org_members (
  org_id TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  role TEXT NOT NULL,
  joined_at BIGINT NOT NULL,
  PRIMARY KEY (org_id, tenant_id)
);
CREATE INDEX org_members_tenant ON org_members(tenant_id, org_id);
CREATE INDEX org_members_page ON org_members(org_id, joined_at, tenant_id COLLATE "C");
CREATE INDEX org_members_role ON org_members(org_id, role);

-- An invite by email (single use, for that address) or by link (email NULL: used by anyone
-- holding it until it expires or is revoked; uses counts them). Stored as a SHA-256 hash.
CREATE TABLE org_invites (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  created_by TEXT REFERENCES tenants(id) ON DELETE SET NULL,
  email TEXT,
  role TEXT NOT NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT,
  used_by_tenant_id TEXT REFERENCES tenants(id) ON DELETE SET NULL,
  uses INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX org_invites_org ON org_invites(org_id, created_at);
`;
