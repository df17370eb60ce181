// Migration 5: what lets a PostgreSQL node answer from memory as a SQLite server does,
// without giving up exactness across nodes.
//
// record_scopes: per (tenant, app, collection), how many records and bytes of record data it
// holds, and a version that moves with every write to it. Statement-level triggers with
// transition tables keep it in the writing transaction, so a statement that reads a scope's
// version and its records sees the two agree (one snapshot): a list's exact total, counted
// once, stays valid while the version stays put, on every node. The quota check reads the
// counts instead of counting.
//
// tenantd_changes: a notification channel. Every change to a session, a tenant, or what
// entitlements derive from is announced at commit; nodes listening keep sessions, tenants and
// entitlements in memory and forget an entry when it is announced (src/db/postgres/changes.ts).
//
// record_auto_indexes: the automatic per-field indexes, shared by every node.
export const recordScopesSchema = `
-- Deltas, not one row per scope: a row every writer updated would make a tenant's writes
-- wait for each other's commits and leave PostgreSQL chasing its dead versions. Each writing
-- statement inserts its own delta; a scope's figures are the sums of its rows, "writes"
-- (statements) serving as its version: it grows with every commit in the order snapshots
-- see them. Readers fold a scope's rows into one when they find many (records.ts).
CREATE TABLE record_scopes (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  collection TEXT NOT NULL,
  records BIGINT NOT NULL,
  bytes BIGINT NOT NULL,
  writes BIGINT NOT NULL
);
CREATE INDEX record_scopes_scope ON record_scopes(tenant_id, app_id, collection) INCLUDE (records, bytes, writes);
INSERT INTO record_scopes (tenant_id, app_id, collection, records, bytes, writes)
  SELECT tenant_id, app_id, collection, COUNT(*), SUM(octet_length(data)), 1 FROM records GROUP BY tenant_id, app_id, collection;

CREATE FUNCTION tenantd_record_scopes_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_scopes (tenant_id, app_id, collection, records, bytes, writes)
    SELECT tenant_id, app_id, collection, COUNT(*), SUM(octet_length(data)), 1 FROM added GROUP BY tenant_id, app_id, collection;
  RETURN NULL;
END $$;
CREATE FUNCTION tenantd_record_scopes_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_scopes (tenant_id, app_id, collection, records, bytes, writes)
    SELECT r.tenant_id, r.app_id, r.collection, -COUNT(*), -SUM(octet_length(r.data)), 1 FROM removed r
    WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = r.tenant_id)
    GROUP BY r.tenant_id, r.app_id, r.collection;
  RETURN NULL;
END $$;
CREATE FUNCTION tenantd_record_scopes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- Records never move between scopes (no statement changes app, tenant or collection): the
  -- bytes change by the difference, and the version moves.
  INSERT INTO record_scopes (tenant_id, app_id, collection, records, bytes, writes)
    SELECT n.tenant_id, n.app_id, n.collection, 0, SUM(octet_length(n.data) - octet_length(o.data)), 1
    FROM after_rows n JOIN before_rows o ON o.seq = n.seq GROUP BY n.tenant_id, n.app_id, n.collection;
  RETURN NULL;
END $$;
CREATE TRIGGER records_scopes_added AFTER INSERT ON records REFERENCING NEW TABLE AS added
  FOR EACH STATEMENT EXECUTE FUNCTION tenantd_record_scopes_added();
CREATE TRIGGER records_scopes_removed AFTER DELETE ON records REFERENCING OLD TABLE AS removed
  FOR EACH STATEMENT EXECUTE FUNCTION tenantd_record_scopes_removed();
CREATE TRIGGER records_scopes_changed AFTER UPDATE ON records REFERENCING OLD TABLE AS before_rows NEW TABLE AS after_rows
  FOR EACH STATEMENT EXECUTE FUNCTION tenantd_record_scopes_changed();

CREATE FUNCTION tenantd_session_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('tenantd_changes', 's:' || OLD.id);
  ELSIF NEW.ended_at IS DISTINCT FROM OLD.ended_at OR NEW.expires_at IS DISTINCT FROM OLD.expires_at
     OR NEW.tenant_id IS DISTINCT FROM OLD.tenant_id OR NEW.app_id IS DISTINCT FROM OLD.app_id THEN
    PERFORM pg_notify('tenantd_changes', 's:' || OLD.id);
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER sessions_changed AFTER UPDATE OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION tenantd_session_changed();

CREATE FUNCTION tenantd_tenant_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tenantd_changes', 't:' || OLD.id);
  RETURN NULL;
END $$;
CREATE TRIGGER tenants_changed AFTER UPDATE OR DELETE ON tenants FOR EACH ROW EXECUTE FUNCTION tenantd_tenant_changed();

CREATE FUNCTION tenantd_billing_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tenantd_changes', 'b');
  RETURN NULL;
END $$;
CREATE TRIGGER billing_plans_changed AFTER INSERT OR UPDATE OR DELETE ON billing_plans FOR EACH STATEMENT EXECUTE FUNCTION tenantd_billing_changed();
CREATE TRIGGER billing_subscriptions_changed AFTER INSERT OR UPDATE OR DELETE ON billing_subscriptions FOR EACH STATEMENT EXECUTE FUNCTION tenantd_billing_changed();
CREATE TRIGGER family_members_changed AFTER INSERT OR UPDATE OR DELETE ON family_members FOR EACH STATEMENT EXECUTE FUNCTION tenantd_billing_changed();

CREATE TABLE record_auto_indexes (
  name TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  collection TEXT NOT NULL,
  path TEXT NOT NULL,
  state TEXT NOT NULL,
  reason TEXT,
  rows BIGINT,
  build_ms BIGINT,
  created_at BIGINT NOT NULL,
  last_used_at BIGINT NOT NULL,
  UNIQUE (app_id, collection, path)
);
CREATE FUNCTION tenantd_auto_indexes_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('tenantd_changes', 'i');
  RETURN NULL;
END $$;
CREATE TRIGGER record_auto_indexes_changed AFTER INSERT OR UPDATE OR DELETE ON record_auto_indexes
  FOR EACH STATEMENT EXECUTE FUNCTION tenantd_auto_indexes_changed();
`;
