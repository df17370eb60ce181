// What main's SQLite migrations 9-11 added, as PostgreSQL migration 2: idempotent refresh
// rotation (a rotated token remembers its successor), tenants being deleted, the delivery
// log's sealed bodies and their pruning, and the dashboard's list indexes.
export const securityDashboardDeliveriesSchema = `
ALTER TABLE refresh_tokens ADD COLUMN successor_hash TEXT;
ALTER TABLE refresh_tokens ADD COLUMN successor_sealed TEXT;
ALTER TABLE tenants ADD COLUMN deleting_at BIGINT;

ALTER TABLE webhook_deliveries ADD COLUMN body_sealed TEXT;
CREATE INDEX webhook_deliveries_age ON webhook_deliveries(created_at);
CREATE INDEX webhook_deliveries_body_age ON webhook_deliveries(created_at) WHERE body_sealed IS NOT NULL;

CREATE INDEX tenants_app_verified ON tenants(app_id, email_verified_at);
CREATE INDEX billing_subscriptions_plan_tenant ON billing_subscriptions(plan_id, tenant_id);
CREATE INDEX webhook_deliveries_app_status ON webhook_deliveries(app_id, status, created_at);
CREATE INDEX files_tenant_created ON files(app_id, tenant_id, created_at);
CREATE INDEX sessions_tenant_created ON sessions(tenant_id, created_at);
`;
