import type { PgQuery, PgSql } from "./connection.ts";
import type { BillingRepository } from "../repositories.ts";

import type { DevSessionRow, Entitlements, PlanRow, SubscriptionRow, UsageIncrement, UsageRow } from "../types.ts";
import { ENTITLING_STATUSES, MAX_USAGE_KEYS } from "../shared.ts";

type RawPlan = Omit<PlanRow, "entitlements"> & { entitlements: string };
const toPlan = (r: RawPlan): PlanRow => ({ ...r, entitlements: JSON.parse(r.entitlements) as Entitlements });

export function createPgBillingRepo(sql: PgSql): BillingRepository {
  const entitling = [...ENTITLING_STATUSES];
  const plan1 = async (rows: Promise<RawPlan[]>) => {
    const [r] = await rows;
    return r && toPlan(r);
  };
  return {
    async insertPlan(p) {
      await sql`INSERT INTO billing_plans (id, app_id, name, slug, description, price_cents, currency, interval, sort_order, entitlements,
          stripe_product_id, stripe_price_id, archived_at, created_at, updated_at)
        VALUES (${p.id}, ${p.appId}, ${p.name}, ${p.slug}, ${p.description}, ${p.priceCents}, ${p.currency}, ${p.interval}, ${p.sortOrder},
          ${JSON.stringify(p.entitlements)}, ${p.stripeProductId}, ${p.stripePriceId}, ${p.archivedAt}, ${p.createdAt}, ${p.updatedAt})`;
    },
    async updatePlan(p) {
      const r = await sql`UPDATE billing_plans SET name = ${p.name}, slug = ${p.slug}, description = ${p.description}, price_cents = ${p.priceCents},
          currency = ${p.currency}, interval = ${p.interval}, sort_order = ${p.sortOrder}, entitlements = ${JSON.stringify(p.entitlements)},
          stripe_product_id = ${p.stripeProductId}, stripe_price_id = ${p.stripePriceId}, archived_at = ${p.archivedAt}, updated_at = ${p.updatedAt}
        WHERE app_id = ${p.appId} AND id = ${p.id}`;
      return r.count > 0;
    },
    findPlan: (appId, id) => plan1(sql<RawPlan[]>`SELECT * FROM billing_plans WHERE app_id = ${appId} AND id = ${id}`),
    findPlanBySlug: (appId, slug) => plan1(sql<RawPlan[]>`SELECT * FROM billing_plans WHERE app_id = ${appId} AND slug = ${slug}`),
    findPlanByStripePrice: (appId, priceId) =>
      plan1(sql<RawPlan[]>`SELECT * FROM billing_plans WHERE app_id = ${appId} AND stripe_price_id = ${priceId}
        ORDER BY archived_at IS NOT NULL, created_at LIMIT 1`),
    async listPlans(appId, opts) {
      const rows = opts.includeArchived
        ? await sql<RawPlan[]>`SELECT * FROM billing_plans WHERE app_id = ${appId} ORDER BY sort_order, created_at, id`
        : await sql<RawPlan[]>`SELECT * FROM billing_plans WHERE app_id = ${appId} AND archived_at IS NULL ORDER BY sort_order, created_at, id`;
      return rows.map(toPlan);
    },

    async subscriptions(appId, tenantId) {
      return [...(await sql<SubscriptionRow[]>`SELECT * FROM billing_subscriptions WHERE app_id = ${appId} AND tenant_id = ${tenantId}`)];
    },
    async findByProviderSubscription(appId, providerSubscriptionId) {
      const [r] = await sql<SubscriptionRow[]>`SELECT * FROM billing_subscriptions WHERE app_id = ${appId} AND provider_subscription_id = ${providerSubscriptionId}`;
      return r;
    },
    async upsertProviderSubscription(s) {
      // A late event about an older subscription never replaces one that still grants access.
      const r = await sql`
        INSERT INTO billing_subscriptions (tenant_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end,
          cancel_at_period_end, expires_at, created_at, updated_at)
        VALUES (${s.tenantId}, 'billing_provider', ${s.appId}, ${s.planId}, ${s.status}, ${s.provider}, ${s.providerSubscriptionId},
          ${s.currentPeriodEnd}, ${s.cancelAtPeriodEnd}, NULL, ${s.now}, ${s.now})
        ON CONFLICT (tenant_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, provider = excluded.provider,
          provider_subscription_id = excluded.provider_subscription_id, current_period_end = excluded.current_period_end,
          cancel_at_period_end = excluded.cancel_at_period_end, updated_at = excluded.updated_at
        WHERE billing_subscriptions.app_id = excluded.app_id AND (
          billing_subscriptions.provider_subscription_id IS NOT DISTINCT FROM excluded.provider_subscription_id
          OR billing_subscriptions.status <> ALL(${entitling}::text[])
          OR excluded.status = ANY(${entitling}::text[]))`;
      return r.count > 0;
    },
    async upsertGrant(g) {
      const status = g.source === "trial" ? "trialing" : "active";
      await sql`
        INSERT INTO billing_subscriptions (tenant_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end,
          cancel_at_period_end, expires_at, created_at, updated_at)
        VALUES (${g.tenantId}, ${g.source}, ${g.appId}, ${g.planId}, ${status}, NULL, NULL, NULL, FALSE, ${g.expiresAt}, ${g.now}, ${g.now})
        ON CONFLICT (tenant_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, expires_at = excluded.expires_at,
          created_at = excluded.created_at, updated_at = excluded.updated_at
        WHERE billing_subscriptions.app_id = excluded.app_id`;
    },
    async removeSource(appId, tenantId, source) {
      return (await sql`DELETE FROM billing_subscriptions WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND source = ${source}`).count > 0;
    },
    async setDevCancelAtPeriodEnd(appId, tenantId, cancel, now) {
      const r = await sql`UPDATE billing_subscriptions SET cancel_at_period_end = ${cancel}, updated_at = ${now}
        WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND source = 'billing_provider' AND provider = 'dev'`;
      return r.count > 0;
    },

    async stripeCustomer(appId, tenantId) {
      const [r] = await sql<{ stripeCustomerId: string }[]>`SELECT stripe_customer_id FROM billing_customers WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
      return r?.stripeCustomerId;
    },
    async tenantForStripeCustomer(appId, customerId) {
      const [r] = await sql<{ tenantId: string }[]>`SELECT tenant_id FROM billing_customers WHERE app_id = ${appId} AND stripe_customer_id = ${customerId}`;
      return r?.tenantId;
    },
    async saveStripeCustomer(appId, tenantId, customerId, now) {
      await sql`INSERT INTO billing_customers (tenant_id, app_id, stripe_customer_id, created_at) VALUES (${tenantId}, ${appId}, ${customerId}, ${now})
        ON CONFLICT (tenant_id) DO NOTHING`;
      const [r] = await sql<{ stripeCustomerId: string }[]>`SELECT stripe_customer_id FROM billing_customers WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
      return r!.stripeCustomerId;
    },

    async stripeEventSeen(appId, eventId) {
      return (await sql`SELECT 1 FROM billing_stripe_events WHERE app_id = ${appId} AND event_id = ${eventId}`).length > 0;
    },
    async recordStripeEvent(appId, eventId, type, now) {
      await sql`INSERT INTO billing_stripe_events (app_id, event_id, type, received_at) VALUES (${appId}, ${eventId}, ${type}, ${now}) ON CONFLICT DO NOTHING`;
    },

    async insertDevSession(s) {
      await sql`INSERT INTO billing_dev_sessions (token_hash, kind, app_id, tenant_id, plan_id, success_url, cancel_url, created_at, expires_at, org_id, seats)
        VALUES (${s.tokenHash}, ${s.kind}, ${s.appId}, ${s.tenantId}, ${s.planId}, ${s.successUrl}, ${s.cancelUrl}, ${s.now}, ${s.expiresAt}, ${s.orgId ?? null}, ${s.seats ?? null})`;
    },
    async findDevSession(tokenHash) {
      const [r] = await sql<DevSessionRow[]>`SELECT kind, app_id, tenant_id, plan_id, success_url, cancel_url, expires_at, used_at, org_id, seats
        FROM billing_dev_sessions WHERE token_hash = ${tokenHash}`;
      return r;
    },
    async consumeDevSession(tokenHash, now) {
      return (await sql`UPDATE billing_dev_sessions SET used_at = ${now} WHERE token_hash = ${tokenHash} AND used_at IS NULL AND expires_at > ${now}`).count > 0;
    },

    async usage(appId, tenantId, featureKey, period, periodStart) {
      const [r] = await sql<{ count: number }[]>`SELECT count FROM billing_usage
        WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND feature_key = ${featureKey} AND period = ${period} AND period_start = ${periodStart}`;
      return r?.count ?? 0;
    },
    async usageList(appId, tenantId, monthStart, dayStart) {
      return [
        ...(await sql<UsageRow[]>`SELECT feature_key, period, period_start, count FROM billing_usage
          WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND ((period = 'monthly' AND period_start = ${monthStart}) OR (period = 'daily' AND period_start = ${dayStart}))
          ORDER BY feature_key COLLATE "C", period COLLATE "C"`),
      ];
    },
    incrementUsage: (u) => incrementUsageIn(sql, u),
  };
}

/**
 * Adds `u.by` to the counter unless that passes `u.limit`: the new count, or undefined when
 * refused. One statement: ON CONFLICT DO UPDATE locks the counter row and checks the limit
 * against its latest committed count, so concurrent increments never pass the limit. Also
 * run inside a record batch's transaction (records.ts).
 */
export async function incrementUsageIn(q: PgQuery, u: UsageIncrement): Promise<number | undefined> {
  const [r] = await q<{ count: number }[]>`
    INSERT INTO billing_usage (tenant_id, feature_key, period, period_start, app_id, count)
    SELECT ${u.tenantId}, ${u.featureKey}, ${u.period}, ${u.periodStart}, ${u.appId}, ${u.by}
    WHERE (${u.limit}::bigint IS NULL OR ${u.by}::bigint <= ${u.limit}::bigint)
      AND (EXISTS (SELECT 1 FROM billing_usage WHERE tenant_id = ${u.tenantId} AND feature_key = ${u.featureKey} AND period = ${u.period} AND period_start = ${u.periodStart})
        OR (SELECT COUNT(*) FROM billing_usage WHERE tenant_id = ${u.tenantId} AND period = ${u.period} AND period_start = ${u.periodStart}) < ${MAX_USAGE_KEYS})
    ON CONFLICT (tenant_id, feature_key, period, period_start) DO UPDATE SET count = billing_usage.count + excluded.count
    WHERE billing_usage.app_id = excluded.app_id AND (${u.limit}::bigint IS NULL OR billing_usage.count + excluded.count <= ${u.limit}::bigint)
    RETURNING count`;
  return r?.count;
}
