import type { PgSql } from "./connection.ts";
import type { OrgBillingRepository } from "../repositories.ts";
import type { OrgSubscriptionRow } from "../org-billing-types.ts";
import type { UsageRow } from "../types.ts";
import { ENTITLING_STATUSES, MAX_USAGE_KEYS } from "../shared.ts";

export function createPgOrgBillingRepo(sql: PgSql): OrgBillingRepository {
  const entitling = [...ENTITLING_STATUSES];
  return {
    async subscriptions(appId, orgId) {
      return [...(await sql<OrgSubscriptionRow[]>`SELECT * FROM org_billing_subscriptions WHERE app_id = ${appId} AND org_id = ${orgId}`)];
    },
    async findByProviderSubscription(appId, id) {
      const [r] = await sql<OrgSubscriptionRow[]>`SELECT * FROM org_billing_subscriptions WHERE app_id = ${appId} AND provider_subscription_id = ${id}`;
      return r;
    },
    async upsertProviderSubscription(s) {
      // As for tenants: a late event about an older subscription never replaces one that still grants access.
      const r = await sql`
        INSERT INTO org_billing_subscriptions (org_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end,
          cancel_at_period_end, expires_at, seats, created_at, updated_at)
        VALUES (${s.orgId}, 'billing_provider', ${s.appId}, ${s.planId}, ${s.status}, ${s.provider}, ${s.providerSubscriptionId},
          ${s.currentPeriodEnd}, ${s.cancelAtPeriodEnd}, NULL, ${s.seats}, ${s.now}, ${s.now})
        ON CONFLICT (org_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, provider = excluded.provider,
          provider_subscription_id = excluded.provider_subscription_id, current_period_end = excluded.current_period_end,
          cancel_at_period_end = excluded.cancel_at_period_end, seats = excluded.seats, updated_at = excluded.updated_at
        WHERE org_billing_subscriptions.app_id = excluded.app_id AND (
          org_billing_subscriptions.provider_subscription_id IS NOT DISTINCT FROM excluded.provider_subscription_id
          OR org_billing_subscriptions.status <> ALL(${entitling}::text[])
          OR excluded.status = ANY(${entitling}::text[]))`;
      return r.count > 0;
    },
    async setSeats(appId, orgId, providerSubscriptionId, seats, now) {
      const r = await sql`UPDATE org_billing_subscriptions SET seats = ${seats}, updated_at = ${now}
        WHERE app_id = ${appId} AND org_id = ${orgId} AND source = 'billing_provider' AND provider_subscription_id = ${providerSubscriptionId}`;
      return r.count > 0;
    },
    async upsertGrant(g) {
      const status = g.source === "trial" ? "trialing" : "active";
      await sql`
        INSERT INTO org_billing_subscriptions (org_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end,
          cancel_at_period_end, expires_at, seats, created_at, updated_at)
        VALUES (${g.orgId}, ${g.source}, ${g.appId}, ${g.planId}, ${status}, NULL, NULL, NULL, FALSE, ${g.expiresAt}, NULL, ${g.now}, ${g.now})
        ON CONFLICT (org_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, expires_at = excluded.expires_at,
          created_at = excluded.created_at, updated_at = excluded.updated_at
        WHERE org_billing_subscriptions.app_id = excluded.app_id`;
    },
    async removeSource(appId, orgId, source) {
      return (await sql`DELETE FROM org_billing_subscriptions WHERE app_id = ${appId} AND org_id = ${orgId} AND source = ${source}`).count > 0;
    },
    async setDevCancelAtPeriodEnd(appId, orgId, cancel, now) {
      const r = await sql`UPDATE org_billing_subscriptions SET cancel_at_period_end = ${cancel}, updated_at = ${now}
        WHERE app_id = ${appId} AND org_id = ${orgId} AND source = 'billing_provider' AND provider = 'dev'`;
      return r.count > 0;
    },
    async stripeCustomer(appId, orgId) {
      const [r] = await sql<{ stripeCustomerId: string }[]>`SELECT stripe_customer_id FROM org_billing_customers WHERE app_id = ${appId} AND org_id = ${orgId}`;
      return r?.stripeCustomerId;
    },
    async orgForStripeCustomer(appId, customerId) {
      const [r] = await sql<{ orgId: string }[]>`SELECT org_id FROM org_billing_customers WHERE app_id = ${appId} AND stripe_customer_id = ${customerId}`;
      return r?.orgId;
    },
    async saveStripeCustomer(appId, orgId, customerId, now) {
      await sql`INSERT INTO org_billing_customers (org_id, app_id, stripe_customer_id, created_at) VALUES (${orgId}, ${appId}, ${customerId}, ${now})
        ON CONFLICT (org_id) DO NOTHING`;
      const [r] = await sql<{ stripeCustomerId: string }[]>`SELECT stripe_customer_id FROM org_billing_customers WHERE app_id = ${appId} AND org_id = ${orgId}`;
      return r!.stripeCustomerId;
    },
    async usage(appId, orgId, featureKey, period, periodStart) {
      const [r] = await sql<{ count: number }[]>`SELECT count FROM org_billing_usage
        WHERE app_id = ${appId} AND org_id = ${orgId} AND feature_key = ${featureKey} AND period = ${period} AND period_start = ${periodStart}`;
      return r?.count ?? 0;
    },
    async usageList(appId, orgId, monthStart, dayStart) {
      return [
        ...(await sql<UsageRow[]>`SELECT feature_key, period, period_start, count FROM org_billing_usage
          WHERE app_id = ${appId} AND org_id = ${orgId} AND ((period = 'monthly' AND period_start = ${monthStart}) OR (period = 'daily' AND period_start = ${dayStart}))
          ORDER BY feature_key COLLATE "C", period COLLATE "C"`),
      ];
    },
    // One statement, as for tenants: ON CONFLICT DO UPDATE locks the counter and checks the limit against its latest count.
    async incrementUsage(u) {
      const [r] = await sql<{ count: number }[]>`
        INSERT INTO org_billing_usage (org_id, feature_key, period, period_start, app_id, count)
        SELECT ${u.orgId}, ${u.featureKey}, ${u.period}, ${u.periodStart}, ${u.appId}, ${u.by}
        WHERE (${u.limit}::bigint IS NULL OR ${u.by}::bigint <= ${u.limit}::bigint)
          AND (EXISTS (SELECT 1 FROM org_billing_usage WHERE org_id = ${u.orgId} AND feature_key = ${u.featureKey} AND period = ${u.period} AND period_start = ${u.periodStart})
            OR (SELECT COUNT(*) FROM org_billing_usage WHERE org_id = ${u.orgId} AND period = ${u.period} AND period_start = ${u.periodStart}) < ${MAX_USAGE_KEYS})
        ON CONFLICT (org_id, feature_key, period, period_start) DO UPDATE SET count = org_billing_usage.count + excluded.count
        WHERE org_billing_usage.app_id = excluded.app_id AND (${u.limit}::bigint IS NULL OR org_billing_usage.count + excluded.count <= ${u.limit}::bigint)
        RETURNING count`;
      return r?.count;
    },
  };
}
