import type { SqliteDb } from "./connection.ts";
import { createBillingChanges } from "./billing-changes.ts";
import { writeBatch } from "./write-batch.ts";
import { ENTITLING_STATUSES, MAX_USAGE_KEYS } from "../shared.ts";
import type { DevSessionRow, Entitlements, PlanRow, ProviderSubscriptionWrite, SubscriptionRow, SubscriptionSource, UsageIncrement, UsageRow } from "../types.ts";

interface RawPlan {
  id: string;
  app_id: string;
  name: string;
  slug: string;
  description: string | null;
  price_cents: number;
  currency: string;
  interval: "month" | "year";
  sort_order: number;
  entitlements: string;
  stripe_product_id: string | null;
  stripe_price_id: string | null;
  archived_at: number | null;
  created_at: number;
  updated_at: number;
}

const toPlan = (r: RawPlan): PlanRow => ({
  id: r.id,
  appId: r.app_id,
  name: r.name,
  slug: r.slug,
  description: r.description,
  priceCents: r.price_cents,
  currency: r.currency,
  interval: r.interval,
  sortOrder: r.sort_order,
  entitlements: JSON.parse(r.entitlements) as Entitlements,
  stripeProductId: r.stripe_product_id,
  stripePriceId: r.stripe_price_id,
  archivedAt: r.archived_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

interface RawSubscription {
  tenant_id: string;
  source: SubscriptionSource;
  app_id: string;
  plan_id: string;
  status: string;
  provider: "stripe" | "dev" | null;
  provider_subscription_id: string | null;
  current_period_end: number | null;
  cancel_at_period_end: number;
  expires_at: number | null;
  created_at: number;
  updated_at: number;
}

const toSubscription = (r: RawSubscription): SubscriptionRow => ({
  tenantId: r.tenant_id,
  source: r.source,
  appId: r.app_id,
  planId: r.plan_id,
  status: r.status,
  provider: r.provider,
  providerSubscriptionId: r.provider_subscription_id,
  currentPeriodEnd: r.current_period_end,
  cancelAtPeriodEnd: r.cancel_at_period_end === 1,
  expiresAt: r.expires_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Statuses of a provider subscription that grant the plan's entitlements. */
const ENTITLING_SQL = ENTITLING_STATUSES.map((s) => `'${s}'`).join(", ");

export type BillingRepo = ReturnType<typeof createBillingRepo>;

/**
 * The usage upsert; `limit` adds a condition to its conflict clause (the counter's app is
 * always checked). A counter the tenant does not have yet is made only while it has fewer
 * than MAX_USAGE_KEYS in the period: the count runs for a new counter alone.
 */
export type UsageArgs = [string, string, string, number, string, number, string, string, string, number, string, string, number];
/** The parameters of incrementUsageSql for one increment (also run inside a record batch, records.ts). */
export const usageArgs = (u: UsageIncrement): UsageArgs => [u.tenantId, u.featureKey, u.period, u.periodStart, u.appId, u.by, u.tenantId, u.featureKey, u.period, u.periodStart, u.tenantId, u.period, u.periodStart];
export const incrementUsageSql = (limit: string) =>
  `INSERT INTO billing_usage (tenant_id, feature_key, period, period_start, app_id, count) SELECT ?, ?, ?, ?, ?, ?
   WHERE EXISTS (SELECT 1 FROM billing_usage WHERE tenant_id = ? AND feature_key = ? AND period = ? AND period_start = ?)
     OR (SELECT COUNT(*) FROM billing_usage WHERE tenant_id = ? AND period = ? AND period_start = ?) < ${MAX_USAGE_KEYS}
   ON CONFLICT (tenant_id, feature_key, period, period_start) DO UPDATE SET count = billing_usage.count + excluded.count
   WHERE billing_usage.app_id = excluded.app_id${limit}
   RETURNING count`;

export function createBillingRepo(db: SqliteDb) {
  const q = {
    insertPlan: db.prepare(
      `INSERT INTO billing_plans (id, app_id, name, slug, description, price_cents, currency, interval, sort_order, entitlements, stripe_product_id, stripe_price_id, archived_at, created_at, updated_at)
       VALUES (@id, @appId, @name, @slug, @description, @priceCents, @currency, @interval, @sortOrder, @entitlements, @stripeProductId, @stripePriceId, @archivedAt, @createdAt, @updatedAt)`,
    ),
    updatePlan: db.prepare(
      `UPDATE billing_plans SET name = @name, slug = @slug, description = @description, price_cents = @priceCents, currency = @currency,
         interval = @interval, sort_order = @sortOrder, entitlements = @entitlements, stripe_product_id = @stripeProductId,
         stripe_price_id = @stripePriceId, archived_at = @archivedAt, updated_at = @updatedAt
       WHERE app_id = @appId AND id = @id`,
    ),
    planById: db.prepare<[string, string], RawPlan>("SELECT * FROM billing_plans WHERE app_id = ? AND id = ?"),
    planBySlug: db.prepare<[string, string], RawPlan>("SELECT * FROM billing_plans WHERE app_id = ? AND slug = ?"),
    planByPrice: db.prepare<[string, string], RawPlan>("SELECT * FROM billing_plans WHERE app_id = ? AND stripe_price_id = ? ORDER BY archived_at IS NOT NULL, created_at LIMIT 1"),
    plans: db.prepare<[string], RawPlan>("SELECT * FROM billing_plans WHERE app_id = ? ORDER BY sort_order, created_at, id"),
    activePlans: db.prepare<[string], RawPlan>("SELECT * FROM billing_plans WHERE app_id = ? AND archived_at IS NULL ORDER BY sort_order, created_at, id"),

    subscriptions: db.prepare<[string, string], RawSubscription>("SELECT * FROM billing_subscriptions WHERE app_id = ? AND tenant_id = ?"),
    byProviderId: db.prepare<[string, string], RawSubscription>("SELECT * FROM billing_subscriptions WHERE app_id = ? AND provider_subscription_id = ?"),
    // A late event about an older subscription never replaces one that still grants access.
    upsertProvider: db.prepare(
      `INSERT INTO billing_subscriptions (tenant_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end, cancel_at_period_end, expires_at, created_at, updated_at)
       VALUES (@tenantId, 'billing_provider', @appId, @planId, @status, @provider, @providerSubscriptionId, @currentPeriodEnd, @cancelAtPeriodEnd, NULL, @now, @now)
       ON CONFLICT (tenant_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, provider = excluded.provider,
         provider_subscription_id = excluded.provider_subscription_id, current_period_end = excluded.current_period_end,
         cancel_at_period_end = excluded.cancel_at_period_end, updated_at = excluded.updated_at
       WHERE billing_subscriptions.app_id = excluded.app_id AND (
         billing_subscriptions.provider_subscription_id IS excluded.provider_subscription_id
         OR billing_subscriptions.status NOT IN (${ENTITLING_SQL})
         OR excluded.status IN (${ENTITLING_SQL}))`,
    ),
    upsertGrant: db.prepare(
      `INSERT INTO billing_subscriptions (tenant_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end, cancel_at_period_end, expires_at, created_at, updated_at)
       VALUES (@tenantId, @source, @appId, @planId, @status, NULL, NULL, NULL, 0, @expiresAt, @now, @now)
       ON CONFLICT (tenant_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, expires_at = excluded.expires_at,
         created_at = excluded.created_at, updated_at = excluded.updated_at
       WHERE billing_subscriptions.app_id = excluded.app_id`,
    ),
    removeSource: db.prepare<[string, string, string]>("DELETE FROM billing_subscriptions WHERE app_id = ? AND tenant_id = ? AND source = ?"),
    setCancelAtPeriodEnd: db.prepare<[number, number, string, string]>(
      "UPDATE billing_subscriptions SET cancel_at_period_end = ?, updated_at = ? WHERE app_id = ? AND tenant_id = ? AND source = 'billing_provider' AND provider = 'dev'",
    ),

    customer: db.prepare<[string, string], { stripe_customer_id: string }>("SELECT stripe_customer_id FROM billing_customers WHERE app_id = ? AND tenant_id = ?"),
    tenantByCustomer: db.prepare<[string, string], { tenant_id: string }>("SELECT tenant_id FROM billing_customers WHERE app_id = ? AND stripe_customer_id = ?"),
    insertCustomer: db.prepare<[string, string, string, number]>(
      "INSERT INTO billing_customers (tenant_id, app_id, stripe_customer_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (tenant_id) DO NOTHING",
    ),

    eventSeen: db.prepare<[string, string], { n: number }>("SELECT 1 AS n FROM billing_stripe_events WHERE app_id = ? AND event_id = ?"),
    recordEvent: db.prepare<[string, string, string, number]>(
      "INSERT INTO billing_stripe_events (app_id, event_id, type, received_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    ),

    insertDevSession: db.prepare(
      `INSERT INTO billing_dev_sessions (token_hash, kind, app_id, tenant_id, plan_id, success_url, cancel_url, created_at, expires_at, org_id, seats)
       VALUES (@tokenHash, @kind, @appId, @tenantId, @planId, @successUrl, @cancelUrl, @now, @expiresAt, @orgId, @seats)`,
    ),
    devSession: db.prepare<[string], { kind: "checkout" | "portal"; app_id: string; tenant_id: string; plan_id: string | null; success_url: string; cancel_url: string; expires_at: number; used_at: number | null; org_id: string | null; seats: number | null }>(
      "SELECT kind, app_id, tenant_id, plan_id, success_url, cancel_url, expires_at, used_at, org_id, seats FROM billing_dev_sessions WHERE token_hash = ?",
    ),
    useDevSession: db.prepare<[number, string, number]>(
      "UPDATE billing_dev_sessions SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?",
    ),

    usage: db.prepare<[string, string, string, string, number], { count: number }>(
      "SELECT count FROM billing_usage WHERE app_id = ? AND tenant_id = ? AND feature_key = ? AND period = ? AND period_start = ?",
    ),
    usageList: db.prepare<[string, string, number, number], { feature_key: string; period: "monthly" | "daily"; period_start: number; count: number }>(
      `SELECT feature_key, period, period_start, count FROM billing_usage
       WHERE app_id = ? AND tenant_id = ? AND ((period = 'monthly' AND period_start = ?) OR (period = 'daily' AND period_start = ?))
       ORDER BY feature_key, period`,
    ),
    // One statement: the limit check and the write cannot be split by a concurrent increment.
    // Positional values, and a statement without the limit for unlimited features: binding
    // named values and testing a NULL limit cost a quarter of an increment's instructions.
    increment: db.prepare<[...UsageArgs], number>(incrementUsageSql("")).pluck(),
    // `by` is at most the limit (checked before): a new counter fits, an existing one only while count + by <= limit.
    incrementWithin: db.prepare<[...UsageArgs, number], number>(incrementUsageSql(" AND billing_usage.count + excluded.count <= ?")).pluck(),
  };

  const changes = createBillingChanges(db);
  const batch = writeBatch(db);
  const planParams = (p: PlanRow) => ({ ...p, entitlements: JSON.stringify(p.entitlements) });

  // Optional in the interface (PostgreSQL has none): typed so, for the engine-neutral store type.
  const versioned: { entitlementsVersion?: (now?: number) => number } = {
    /**
     * Moves whenever plans, subscriptions or family membership may have changed: at once on
     * this connection, within FRESHNESS_MS of `now` for another process's (see
     * billing-changes.ts). Synchronous: it is read on every request that needs entitlements.
     */
    entitlementsVersion: (now?: number) => changes.version(now),
  };

  return {
    ...versioned,
    async insertPlan(plan: PlanRow): Promise<void> {
      q.insertPlan.run(planParams(plan));
    },
    async updatePlan(plan: PlanRow): Promise<boolean> {
      return q.updatePlan.run(planParams(plan)).changes > 0;
    },
    async findPlan(appId: string, id: string): Promise<PlanRow | undefined> {
      const r = q.planById.get(appId, id);
      return r && toPlan(r);
    },
    async findPlanBySlug(appId: string, slug: string): Promise<PlanRow | undefined> {
      const r = q.planBySlug.get(appId, slug);
      return r && toPlan(r);
    },
    async findPlanByStripePrice(appId: string, priceId: string): Promise<PlanRow | undefined> {
      const r = q.planByPrice.get(appId, priceId);
      return r && toPlan(r);
    },
    /** Sorted by sortOrder; archived plans only when asked. */
    async listPlans(appId: string, opts: { includeArchived: boolean }): Promise<PlanRow[]> {
      return (opts.includeArchived ? q.plans : q.activePlans).all(appId).map(toPlan);
    },

    async subscriptions(appId: string, tenantId: string): Promise<SubscriptionRow[]> {
      return q.subscriptions.all(appId, tenantId).map(toSubscription);
    },
    async findByProviderSubscription(appId: string, providerSubscriptionId: string): Promise<SubscriptionRow | undefined> {
      const r = q.byProviderId.get(appId, providerSubscriptionId);
      return r && toSubscription(r);
    },
    /** Writes the tenant's provider subscription; false when a live one for another subscription id is kept. */
    async upsertProviderSubscription(s: ProviderSubscriptionWrite): Promise<boolean> {
      return q.upsertProvider.run({ ...s, cancelAtPeriodEnd: s.cancelAtPeriodEnd ? 1 : 0 }).changes > 0;
    },
    /** A gift or trial; replaces an earlier one of the same source. */
    async upsertGrant(g: { appId: string; tenantId: string; source: "gift" | "trial"; planId: string; expiresAt: number | null; now: number }): Promise<void> {
      q.upsertGrant.run({ ...g, status: g.source === "trial" ? "trialing" : "active" });
    },
    async removeSource(appId: string, tenantId: string, source: SubscriptionSource): Promise<boolean> {
      return q.removeSource.run(appId, tenantId, source).changes > 0;
    },
    async setDevCancelAtPeriodEnd(appId: string, tenantId: string, cancel: boolean, now: number): Promise<boolean> {
      return q.setCancelAtPeriodEnd.run(cancel ? 1 : 0, now, appId, tenantId).changes > 0;
    },

    async stripeCustomer(appId: string, tenantId: string): Promise<string | undefined> {
      return q.customer.get(appId, tenantId)?.stripe_customer_id;
    },
    async tenantForStripeCustomer(appId: string, customerId: string): Promise<string | undefined> {
      return q.tenantByCustomer.get(appId, customerId)?.tenant_id;
    },
    /** Keeps the first customer recorded for a tenant; returns the one that is stored. */
    async saveStripeCustomer(appId: string, tenantId: string, customerId: string, now: number): Promise<string> {
      q.insertCustomer.run(tenantId, appId, customerId, now);
      return q.customer.get(appId, tenantId)!.stripe_customer_id;
    },

    async stripeEventSeen(appId: string, eventId: string): Promise<boolean> {
      return q.eventSeen.get(appId, eventId) !== undefined;
    },
    async recordStripeEvent(appId: string, eventId: string, type: string, now: number): Promise<void> {
      q.recordEvent.run(appId, eventId, type, now);
    },

    async insertDevSession(s: { tokenHash: string; kind: "checkout" | "portal"; appId: string; tenantId: string; planId: string | null; successUrl: string; cancelUrl: string; now: number; expiresAt: number; orgId?: string | null; seats?: number | null }): Promise<void> {
      q.insertDevSession.run({ ...s, orgId: s.orgId ?? null, seats: s.seats ?? null });
    },
    async findDevSession(tokenHash: string): Promise<DevSessionRow | undefined> {
      const r = q.devSession.get(tokenHash);
      return r && { kind: r.kind, appId: r.app_id, tenantId: r.tenant_id, planId: r.plan_id, successUrl: r.success_url, cancelUrl: r.cancel_url, expiresAt: r.expires_at, usedAt: r.used_at, orgId: r.org_id, seats: r.seats };
    },
    /** Marks a live, unused session used; false if it was used, expired or unknown. */
    async consumeDevSession(tokenHash: string, now: number): Promise<boolean> {
      return q.useDevSession.run(now, tokenHash, now).changes > 0;
    },

    async usage(appId: string, tenantId: string, featureKey: string, period: string, periodStart: number): Promise<number> {
      return q.usage.get(appId, tenantId, featureKey, period, periodStart)?.count ?? 0;
    },
    /** Counters of the current month and day. */
    async usageList(appId: string, tenantId: string, monthStart: number, dayStart: number): Promise<UsageRow[]> {
      return q.usageList.all(appId, tenantId, monthStart, dayStart).map((r) => ({ featureKey: r.feature_key, period: r.period, periodStart: r.period_start, count: r.count }));
    },
    /** Adds `by` unless the result would pass `limit` (null = none); the new count, or undefined when refused. */
    incrementUsage(u: UsageIncrement): Promise<number | undefined> | undefined {
      const { limit } = u;
      const args = usageArgs(u);
      if (limit === null) return batch.add(() => q.increment.get(...args));
      if (u.by > limit) return undefined;
      return batch.add(() => q.incrementWithin.get(...args, limit));
    },
  };
}
