// Migration 18: billing per organization (docs/organizations.md#billing). The tenant tables
// point at tenants; these mirror them for organizations. `seats` is the paid quantity of a
// provider subscription (null on gifts and trials). A development checkout or portal page
// started for an organization names it in `org_id` (no foreign key: its page expires within
// the hour and a deleted organization's page answers 404).
export const orgBillingSchema = `
CREATE TABLE org_billing_subscriptions (
  org_id TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('billing_provider', 'gift', 'trial')),
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  plan_id TEXT NOT NULL REFERENCES billing_plans(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  provider TEXT,
  provider_subscription_id TEXT,
  current_period_end BIGINT,
  cancel_at_period_end BOOLEAN NOT NULL DEFAULT FALSE,
  expires_at BIGINT,
  seats INTEGER,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  PRIMARY KEY (org_id, source)
);
CREATE INDEX org_billing_subscriptions_provider ON org_billing_subscriptions(app_id, provider_subscription_id) WHERE provider_subscription_id IS NOT NULL;
CREATE INDEX org_billing_subscriptions_plan ON org_billing_subscriptions(plan_id);
CREATE INDEX org_billing_subscriptions_app ON org_billing_subscriptions(app_id);

CREATE TABLE org_billing_customers (
  org_id TEXT PRIMARY KEY REFERENCES orgs(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  stripe_customer_id TEXT NOT NULL,
  created_at BIGINT NOT NULL,
  UNIQUE (app_id, stripe_customer_id)
);

CREATE TABLE org_billing_usage (
  org_id TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
  feature_key TEXT NOT NULL,
  period TEXT NOT NULL CHECK (period IN ('monthly', 'daily')),
  period_start BIGINT NOT NULL,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  count BIGINT NOT NULL,
  PRIMARY KEY (org_id, feature_key, period, period_start)
);
CREATE INDEX org_billing_usage_app ON org_billing_usage(app_id);

ALTER TABLE billing_dev_sessions ADD COLUMN org_id TEXT;
ALTER TABLE billing_dev_sessions ADD COLUMN seats INTEGER;
`;
