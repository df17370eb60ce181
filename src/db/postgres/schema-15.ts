// Migration 15: the bytes of record data each tenant stores, for the byte quota
// (settings.quotas.recordBytes), as striped counters kept by the record triggers.
//
// record_scopes (migration 7) already counts bytes, but per collection: a write that must
// not take the tenant past its cap needs a row per tenant to lock. One row would make every
// write of a tenant wait for the one before it to commit (a WAL flush each), so the tenant's
// bytes are split over STRIPES rows, one per connection stripe as in record_scopes. A writer
// that grows the data locks its own stripe and checks it against its share of the cap (the
// cap split in STRIPES parts); shares add up to the cap, so writers on different stripes
// never wait for each other and still cannot pass it together. A stripe short of room
// locks them all and moves the free bytes to itself (records.ts, makeRoom).
//
// The trigger functions of migration 7 are replaced by ones that move the byte stripe first,
// then record_scopes as before: every writer takes a tenant's rows in that order.
const STRIPES = 16;
const STRIPE = `(pg_backend_pid() % ${STRIPES})::smallint`;

export const recordBytesSchema = `
CREATE TABLE record_byte_stripes (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  stripe SMALLINT NOT NULL,
  bytes BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, stripe)
) WITH (fillfactor = 50);
-- octet_length reads a stored value's size without decompressing or fetching it.
INSERT INTO record_byte_stripes (tenant_id, stripe, bytes) SELECT tenant_id, 0, SUM(octet_length(data)) FROM records GROUP BY tenant_id;

${triggerFunction("added", "tenant_id, SUM(octet_length(data))", "FROM added GROUP BY tenant_id",
  "FROM added GROUP BY tenant_id, app_id, collection", "tenant_id, app_id, collection, COUNT(*), SUM(octet_length(data))")}
-- A tenant deleted with its records (by cascade) takes its counters with it: nothing to count.
${triggerFunction("removed", "r.tenant_id, -SUM(octet_length(r.data))", "FROM removed r WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = r.tenant_id) GROUP BY r.tenant_id",
  "FROM removed r WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = r.tenant_id) GROUP BY r.tenant_id, r.app_id, r.collection",
  "r.tenant_id, r.app_id, r.collection, -COUNT(*), -SUM(octet_length(r.data))")}
-- Records never move between scopes. An update that keeps the size leaves the byte stripe alone (no lock).
${triggerFunction("changed", "n.tenant_id, SUM(octet_length(n.data) - octet_length(o.data))", "FROM after_rows n JOIN before_rows o ON o.seq = n.seq GROUP BY n.tenant_id HAVING SUM(octet_length(n.data) - octet_length(o.data)) <> 0",
  "FROM after_rows n JOIN before_rows o ON o.seq = n.seq GROUP BY n.tenant_id, n.app_id, n.collection",
  "n.tenant_id, n.app_id, n.collection, 0, SUM(octet_length(n.data) - octet_length(o.data))")}
`;

/** Migration 7's trigger function (its record_scopes statement unchanged), moving the tenant's byte stripe first. */
function triggerFunction(name: string, byteColumns: string, byteFrom: string, from: string, columns: string): string {
  return `CREATE OR REPLACE FUNCTION tenantd_record_scopes_${name}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO record_byte_stripes AS b (tenant_id, bytes, stripe)
    SELECT ${byteColumns}, ${STRIPE} ${byteFrom} ORDER BY 1
  ON CONFLICT (tenant_id, stripe) DO UPDATE SET bytes = b.bytes + excluded.bytes;
  INSERT INTO record_scopes AS s (tenant_id, app_id, collection, records, bytes, stripe, writes)
    SELECT ${columns}, ${STRIPE}, 1 ${from} ORDER BY 1, 2, 3
  ON CONFLICT (tenant_id, app_id, collection, stripe) DO UPDATE
    SET records = s.records + excluded.records, bytes = s.bytes + excluded.bytes, writes = s.writes + 1;
  RETURN NULL;
END $$;`;
}
