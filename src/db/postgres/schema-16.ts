// Migration 16: the export's emailed download links (hashed, one use), the index that reads
// a tenant's webhook deliveries into its export, and the developers the operator lets make
// and download backups from the dashboard (`tenantd developer operator`).
export const exportLinksOperatorsSchema = `
CREATE TABLE export_links (
  token_hash TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX export_links_tenant ON export_links(tenant_id);
CREATE INDEX webhook_deliveries_tenant ON webhook_deliveries(app_id, tenant_id, created_at);
CREATE TABLE backup_operators (
  developer_id TEXT PRIMARY KEY REFERENCES developers(id) ON DELETE CASCADE,
  granted_at BIGINT NOT NULL
);
`;
