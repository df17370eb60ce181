// The PostgreSQL schema: the same tables and columns as SQLite's (src/db/sqlite/schema/*.ts), with
// PostgreSQL types. Times are BIGINT milliseconds since the epoch (UTC). Settings and
// entitlements stay TEXT: they are opaque to SQL and keep their bytes across engines.
export const initialSchema = `
CREATE TABLE server_meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);

CREATE TABLE developers (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT NOT NULL,
  created_at BIGINT NOT NULL
);

CREATE TABLE developer_sessions (
  token_hash TEXT PRIMARY KEY,
  developer_id TEXT NOT NULL REFERENCES developers(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);
CREATE INDEX developer_sessions_developer ON developer_sessions(developer_id);
CREATE INDEX developer_sessions_expires ON developer_sessions(expires_at);

CREATE TABLE apps (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  publishable_key TEXT NOT NULL UNIQUE,
  secret_key_hash TEXT,
  owner_id TEXT REFERENCES developers(id) ON DELETE SET NULL,
  settings TEXT NOT NULL DEFAULT '{}',
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX apps_owner ON apps(owner_id);

-- Every process caches apps; a statement-level trigger counts changes so a cache can tell
-- cheaply that another process (the CLI, another node) changed them.
CREATE TABLE change_counters (
  name TEXT PRIMARY KEY,
  n BIGINT NOT NULL
);
INSERT INTO change_counters (name, n) VALUES ('apps', 0);
CREATE FUNCTION tenantd_count_apps_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE change_counters SET n = n + 1 WHERE name = 'apps';
  RETURN NULL;
END $$;
CREATE TRIGGER apps_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON apps
  FOR EACH STATEMENT EXECUTE FUNCTION tenantd_count_apps_change();

CREATE TABLE tenants (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  password_hash TEXT,
  email_verified_at BIGINT,
  locale TEXT NOT NULL DEFAULT 'en',
  parent_tenant_id TEXT REFERENCES tenants(id) ON DELETE SET NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (app_id, email)
);
CREATE INDEX tenants_parent ON tenants(parent_tenant_id) WHERE parent_tenant_id IS NOT NULL;
-- Both columns one way: scanned forward for the createdAt sort, backward for -createdAt
-- (created_at DESC, id DESC), the admin list's default; mixed directions served neither.
CREATE INDEX tenants_app_created ON tenants(app_id, created_at, id);

CREATE TABLE sessions (
  id TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  ended_at BIGINT,
  end_reason TEXT
);
CREATE INDEX sessions_tenant ON sessions(tenant_id);
CREATE INDEX sessions_expires ON sessions(expires_at);
CREATE INDEX sessions_ended ON sessions(ended_at) WHERE ended_at IS NOT NULL;

CREATE TABLE refresh_tokens (
  token_hash TEXT PRIMARY KEY,
  session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  rotated_at BIGINT
);
CREATE INDEX refresh_tokens_session ON refresh_tokens(session_id);

CREATE TABLE email_tokens (
  token_hash TEXT PRIMARY KEY,
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  purpose TEXT NOT NULL CHECK (purpose IN ('verify', 'reset')),
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX email_tokens_tenant ON email_tokens(tenant_id, purpose);

CREATE TABLE outbox (
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT REFERENCES tenants(id) ON DELETE CASCADE,
  kind TEXT NOT NULL,
  locale TEXT NOT NULL,
  to_address TEXT NOT NULL,
  subject TEXT NOT NULL,
  text_body TEXT NOT NULL,
  html_body TEXT NOT NULL,
  link TEXT,
  created_at BIGINT NOT NULL
);
CREATE INDEX outbox_app ON outbox(app_id, created_at);
CREATE INDEX outbox_tenant ON outbox(tenant_id) WHERE tenant_id IS NOT NULL;

-- data is the record's JSON exactly as written (key order kept, returned as is); doc is
-- the same value as jsonb, which filters, sorts and expression indexes read.
CREATE TABLE records (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  collection TEXT NOT NULL,
  data TEXT NOT NULL,
  doc JSONB GENERATED ALWAYS AS (data::jsonb) STORED,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);
-- seq last: the default order (created_at, seq) comes from the index, with no sort of ties.
CREATE INDEX records_list ON records(tenant_id, app_id, collection, created_at, seq);
CREATE INDEX records_app ON records(app_id);

CREATE TABLE share_links (
  id TEXT PRIMARY KEY,
  token_hash TEXT NOT NULL UNIQUE,
  record_id TEXT NOT NULL REFERENCES records(id) ON DELETE CASCADE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT
);
CREATE INDEX share_links_record ON share_links(record_id);

CREATE TABLE files (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  pathname TEXT NOT NULL UNIQUE,
  size_bytes BIGINT NOT NULL,
  mime_type TEXT NOT NULL,
  original_filename TEXT,
  sha256 TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX files_tenant_size ON files(app_id, tenant_id, size_bytes);
CREATE INDEX files_app_id ON files(app_id, id);
CREATE INDEX files_tenant ON files(tenant_id);

CREATE TABLE billing_plans (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  slug TEXT NOT NULL,
  description TEXT,
  price_cents BIGINT NOT NULL,
  currency TEXT NOT NULL,
  interval TEXT NOT NULL CHECK (interval IN ('month', 'year')),
  sort_order INTEGER NOT NULL DEFAULT 0,
  entitlements TEXT NOT NULL DEFAULT '{}',
  stripe_product_id TEXT,
  stripe_price_id TEXT,
  archived_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  UNIQUE (app_id, slug)
);
CREATE INDEX billing_plans_app ON billing_plans(app_id, sort_order);
CREATE INDEX billing_plans_price ON billing_plans(app_id, stripe_price_id) WHERE stripe_price_id IS NOT NULL;

CREATE TABLE billing_subscriptions (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('billing_provider', 'gift', 'trial')),
  app_id TEXT NOT NULL,
  plan_id TEXT NOT NULL REFERENCES billing_plans(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  provider TEXT,
  provider_subscription_id TEXT,
  current_period_end BIGINT,
  cancel_at_period_end BOOLEAN NOT NULL DEFAULT FALSE,
  expires_at BIGINT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, source)
);
CREATE INDEX billing_subscriptions_app ON billing_subscriptions(app_id);
CREATE INDEX billing_subscriptions_plan ON billing_subscriptions(plan_id);
CREATE INDEX billing_subscriptions_provider ON billing_subscriptions(app_id, provider_subscription_id) WHERE provider_subscription_id IS NOT NULL;

CREATE TABLE billing_customers (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  stripe_customer_id TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (app_id, stripe_customer_id)
);

CREATE TABLE billing_stripe_events (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  PRIMARY KEY (app_id, event_id)
);

CREATE TABLE billing_dev_sessions (
  token_hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('checkout', 'portal')),
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  plan_id TEXT REFERENCES billing_plans(id) ON DELETE CASCADE,
  success_url TEXT NOT NULL,
  cancel_url TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX billing_dev_sessions_tenant ON billing_dev_sessions(tenant_id);
CREATE INDEX billing_dev_sessions_plan ON billing_dev_sessions(plan_id);

CREATE TABLE billing_usage (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  feature_key TEXT NOT NULL,
  period TEXT NOT NULL CHECK (period IN ('monthly', 'daily')),
  period_start BIGINT NOT NULL,
  app_id TEXT NOT NULL,
  count BIGINT NOT NULL,
  PRIMARY KEY (tenant_id, feature_key, period, period_start)
);

CREATE TABLE webhook_configs (
  app_id TEXT PRIMARY KEY REFERENCES apps(id) ON DELETE CASCADE,
  url TEXT NOT NULL,
  secret_sealed TEXT NOT NULL,
  secret_created_at BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL
);

CREATE TABLE webhook_events (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  tenant_id TEXT,
  data TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
CREATE INDEX webhook_events_app ON webhook_events(app_id);

CREATE TABLE webhook_deliveries (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  event TEXT NOT NULL,
  tenant_id TEXT,
  status TEXT NOT NULL CHECK (status IN ('sending', 'delivered', 'failed', 'invalid_config')),
  url TEXT,
  status_code INTEGER,
  error TEXT,
  duration_ms BIGINT,
  created_at BIGINT NOT NULL,
  claimed_at BIGINT NOT NULL,
  finished_at BIGINT
);
CREATE INDEX webhook_deliveries_app ON webhook_deliveries(app_id, created_at);
CREATE INDEX webhook_deliveries_sending ON webhook_deliveries(claimed_at) WHERE status = 'sending';

CREATE TABLE invite_tokens (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  note TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT,
  used_by_tenant_id TEXT REFERENCES tenants(id) ON DELETE SET NULL
);
CREATE INDEX invite_tokens_tenant ON invite_tokens(tenant_id, created_at);
CREATE INDEX invite_tokens_used_by ON invite_tokens(used_by_tenant_id) WHERE used_by_tenant_id IS NOT NULL;

CREATE TABLE family_invites (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  note TEXT,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT,
  used_by_tenant_id TEXT REFERENCES tenants(id) ON DELETE SET NULL
);
CREATE INDEX family_invites_tenant ON family_invites(tenant_id, created_at);
CREATE INDEX family_invites_used_by ON family_invites(used_by_tenant_id) WHERE used_by_tenant_id IS NOT NULL;

CREATE TABLE family_members (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  owner_tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  joined_at BIGINT NOT NULL
);
CREATE INDEX family_members_owner ON family_members(owner_tenant_id, joined_at, tenant_id);

CREATE TABLE oauth_accounts (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  provider_account_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  email TEXT,
  email_verified BOOLEAN NOT NULL DEFAULT FALSE,
  linked_at BIGINT NOT NULL,
  last_login_at BIGINT NOT NULL,
  PRIMARY KEY (app_id, provider, provider_account_id)
);
CREATE INDEX oauth_accounts_tenant ON oauth_accounts(tenant_id);

CREATE TABLE oauth_states (
  state_hash TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  provider TEXT NOT NULL,
  redirect_url TEXT NOT NULL,
  invite_token TEXT,
  code_verifier TEXT,
  browser_hash TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL,
  used_at BIGINT
);
CREATE INDEX oauth_states_expires ON oauth_states(expires_at);
`;
