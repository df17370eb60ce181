// Billing: plans, one subscription row per (tenant, source), Stripe customers, processed
// Stripe events, development-provider sessions and usage counters.
export const billingSchema = `
CREATE TABLE billing_plans (
  id TEXT PRIMARY KEY,
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  name TEXT NOT NULL,
  slug TEXT NOT NULL,
  description TEXT,
  price_cents INTEGER NOT NULL,
  currency TEXT NOT NULL,
  interval TEXT NOT NULL CHECK (interval IN ('month', 'year')),
  sort_order INTEGER NOT NULL DEFAULT 0,
  entitlements TEXT NOT NULL DEFAULT '{}',
  stripe_product_id TEXT,
  stripe_price_id TEXT,
  archived_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  UNIQUE (app_id, slug)
);
CREATE INDEX billing_plans_app ON billing_plans(app_id, sort_order);
CREATE INDEX billing_plans_price ON billing_plans(app_id, stripe_price_id) WHERE stripe_price_id IS NOT NULL;

-- source: billing_provider | gift | trial. provider: stripe | dev (billing_provider rows only).
-- expires_at: gift expiry (NULL = permanent) or trial end.
CREATE TABLE billing_subscriptions (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (source IN ('billing_provider', 'gift', 'trial')),
  app_id TEXT NOT NULL,
  plan_id TEXT NOT NULL REFERENCES billing_plans(id) ON DELETE CASCADE,
  status TEXT NOT NULL,
  provider TEXT,
  provider_subscription_id TEXT,
  current_period_end INTEGER,
  cancel_at_period_end INTEGER NOT NULL DEFAULT 0,
  expires_at INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, source)
);
CREATE INDEX billing_subscriptions_app ON billing_subscriptions(app_id);
CREATE INDEX billing_subscriptions_provider ON billing_subscriptions(app_id, provider_subscription_id) WHERE provider_subscription_id IS NOT NULL;

CREATE TABLE billing_customers (
  tenant_id TEXT PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  app_id TEXT NOT NULL,
  stripe_customer_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  UNIQUE (app_id, stripe_customer_id)
);

-- Stripe events already handled, so a redelivery has no second effect.
CREATE TABLE billing_stripe_events (
  app_id TEXT NOT NULL REFERENCES apps(id) ON DELETE CASCADE,
  event_id TEXT NOT NULL,
  type TEXT NOT NULL,
  received_at INTEGER NOT NULL,
  PRIMARY KEY (app_id, event_id)
);

-- Development provider checkout and portal pages; the token in the page URL is stored hashed.
CREATE TABLE billing_dev_sessions (
  token_hash TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('checkout', 'portal')),
  app_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  plan_id TEXT REFERENCES billing_plans(id) ON DELETE CASCADE,
  success_url TEXT NOT NULL,
  cancel_url TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  used_at INTEGER
);
CREATE INDEX billing_dev_sessions_tenant ON billing_dev_sessions(tenant_id);

-- period_start: the UTC start (ms) of the calendar month or day the count belongs to.
CREATE TABLE billing_usage (
  tenant_id TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  feature_key TEXT NOT NULL,
  period TEXT NOT NULL CHECK (period IN ('monthly', 'daily')),
  period_start INTEGER NOT NULL,
  app_id TEXT NOT NULL,
  count INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, feature_key, period, period_start)
);
`;
