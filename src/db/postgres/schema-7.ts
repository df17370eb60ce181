// Migration 7: record_scopes becomes a few counters per collection, updated in place,
// instead of one delta row per writing statement.
//
// Deltas needed folding by readers; between folds a busy tenant's quota check and lists
// summed dozens of rows, and each fold left dead rows for autovacuum, so PostgreSQL spent a
// growing share of every write and list on the bookkeeping. Now each connection adds to its
// own stripe of the collection's counter (pg_backend_pid() modulo STRIPES): reads sum at most
// STRIPES rows, writers on different connections never wait for each other, and an update
// that changes no indexed column stays on its page (HOT, fillfactor 50), so the table does
// not grow. "writes" still moves by one per writing statement, so SUM(writes) remains the
// collection's version as lists use it (records.ts, totals.ts).
const STRIPES = 16;

export const recordScopeStripesSchema = `
CREATE TABLE record_scope_stripes (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  collection TEXT NOT NULL,
  stripe SMALLINT NOT NULL,
  records BIGINT NOT NULL,
  bytes BIGINT NOT NULL,
  writes BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, app_id, collection, stripe)
) WITH (fillfactor = 50);
INSERT INTO record_scope_stripes (tenant_id, app_id, collection, stripe, records, bytes, writes)
  SELECT tenant_id, app_id, collection, 0, SUM(records), SUM(bytes), SUM(writes) FROM record_scopes GROUP BY tenant_id, app_id, collection;
DROP TABLE record_scopes;
ALTER TABLE record_scope_stripes RENAME TO record_scopes;
ALTER INDEX record_scope_stripes_pkey RENAME TO record_scopes_pkey;
ALTER TABLE record_scopes RENAME CONSTRAINT record_scope_stripes_tenant_id_fkey TO record_scopes_tenant_id_fkey;

${scopesTrigger("added", "FROM added GROUP BY tenant_id, app_id, collection",
  "tenant_id, app_id, collection, COUNT(*), SUM(octet_length(data))")}
-- A tenant deleted with its records (by cascade) takes its counters with it: nothing to count.
${scopesTrigger("removed", "FROM removed r WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = r.tenant_id) GROUP BY r.tenant_id, r.app_id, r.collection",
  "r.tenant_id, r.app_id, r.collection, -COUNT(*), -SUM(octet_length(r.data))")}
-- Records never move between scopes: the bytes change by the difference, and the version moves.
${scopesTrigger("changed", "FROM after_rows n JOIN before_rows o ON o.seq = n.seq GROUP BY n.tenant_id, n.app_id, n.collection",
  "n.tenant_id, n.app_id, n.collection, 0, SUM(octet_length(n.data) - octet_length(o.data))")}

-- A refresh moves a session's expiry later on every use: not worth telling every node. Nodes
-- read a kept session again when it looks expired (index.ts), so only an earlier expiry and
-- the other changes are announced.
CREATE OR REPLACE FUNCTION tenantd_session_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('tenantd_changes', 's:' || OLD.id);
  ELSIF NEW.ended_at IS DISTINCT FROM OLD.ended_at OR NEW.expires_at < OLD.expires_at
     OR NEW.tenant_id IS DISTINCT FROM OLD.tenant_id OR NEW.app_id IS DISTINCT FROM OLD.app_id THEN
    PERFORM pg_notify('tenantd_changes', 's:' || OLD.id);
  END IF;
  RETURN NULL;
END $$;
`;

/**
 * A trigger function adding one statement's change to each scope it touched, in this
 * connection's stripe. Rows are taken in one order, so two statements that share a stripe
 * cannot deadlock on them.
 */
function scopesTrigger(name: string, from: string, columns: string): string {
  return `CREATE OR REPLACE FUNCTION tenantd_record_scopes_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_scopes AS s (tenant_id, app_id, collection, records, bytes, stripe, writes)
    SELECT ${columns}, (pg_backend_pid() % ${STRIPES})::smallint, 1 ${from} ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, app_id, collection, stripe) DO UPDATE
    SET records = s.records + excluded.records, bytes = s.bytes + excluded.bytes, writes = s.writes + 1;
  RETURN NULL;
END $$;`;
}
