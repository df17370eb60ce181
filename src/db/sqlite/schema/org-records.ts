// Migration 23: each organization owns its records through a "data owner" row in tenants
// whose id is the organization's id (src/orgs/records.ts says why). Triggers keep that row as
// long as the organization: every path that makes or deletes one (the API, the CLI, an account
// deletion's hand-over, an app deletion, a store copy) moves it, and deleting the row takes the
// organization's records, share links, file rows and byte counter with it by cascade.
// Its email is the org id: no address a person can sign in with (those hold an "@").
export const orgRecordsSchema = `
CREATE TRIGGER org_data_owner_added AFTER INSERT ON orgs BEGIN
  INSERT INTO tenants (id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at)
    VALUES (NEW.id, NEW.app_id, NEW.id, NULL, NULL, 'en', NULL, NEW.created_at) ON CONFLICT DO NOTHING;
END;
CREATE TRIGGER org_data_owner_removed AFTER DELETE ON orgs BEGIN
  DELETE FROM tenants WHERE id = OLD.id;
END;
INSERT INTO tenants (id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at)
  SELECT id, app_id, id, NULL, NULL, 'en', NULL, created_at FROM orgs WHERE true ON CONFLICT DO NOTHING;
`;
