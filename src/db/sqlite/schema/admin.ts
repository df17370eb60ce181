// Indexes for the developer dashboard's lists, so paging stays fast on 100,000 tenants:
// newest-first tenant pages, tenants by plan, the delivery log by status, a tenant's files.
// tenants_app_created carries email and verification too, so a search by a part of the
// email or by verified state reads only the index, never the rows it skips.
export const adminSchema = `
CREATE INDEX tenants_app_created ON tenants(app_id, created_at, id, email, email_verified_at);
CREATE INDEX tenants_app_verified ON tenants(app_id, email_verified_at);
CREATE INDEX billing_subscriptions_plan ON billing_subscriptions(plan_id, tenant_id);
CREATE INDEX webhook_deliveries_app_status ON webhook_deliveries(app_id, status, created_at);
CREATE INDEX files_tenant_created ON files(app_id, tenant_id, created_at);
CREATE INDEX sessions_tenant_created ON sessions(tenant_id, created_at);
`;
