// Two list indexes whose column order did not match the order the lists ask for, so
// PostgreSQL sorted: the admin tenant list's default (created_at DESC, id DESC) is served by
// scanning (app_id, created_at, id) backward; the records list's default (created_at, seq)
// needs seq in the index to read ties in order.
export const listOrderIndexesSchema = `
DROP INDEX IF EXISTS tenants_app_created;
CREATE INDEX tenants_app_created ON tenants(app_id, created_at, id);
DROP INDEX IF EXISTS records_list;
CREATE INDEX records_list ON records(tenant_id, app_id, collection, created_at, seq);
`;
