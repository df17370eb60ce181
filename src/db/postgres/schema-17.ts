// Migration 17: each organization owns its records through a "data owner" row in tenants
// whose id is the organization's id (src/orgs/records.ts says why). Triggers keep that row as
// long as the organization: every path that makes or deletes one (the API, the CLI, an account
// deletion's hand-over, an app deletion, a store copy) moves it, and deleting the row takes the
// organization's records, share links, file rows and byte counters with it by cascade.
// Its email is the org id: no address a person can sign in with (those hold an "@").
export const orgRecordsSchema = `
CREATE FUNCTION org_data_owner_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO tenants (id, app_id, email, locale, created_at) VALUES (NEW.id, NEW.app_id, NEW.id, 'en', NEW.created_at) ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER org_data_owner_added AFTER INSERT ON orgs FOR EACH ROW EXECUTE FUNCTION org_data_owner_added();
CREATE FUNCTION org_data_owner_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM tenants WHERE id = OLD.id;
  RETURN NULL;
END $$;
CREATE TRIGGER org_data_owner_removed AFTER DELETE ON orgs FOR EACH ROW EXECUTE FUNCTION org_data_owner_removed();
INSERT INTO tenants (id, app_id, email, locale, created_at) SELECT id, app_id, id, 'en', created_at FROM orgs ON CONFLICT DO NOTHING;
`;
