import type { SqliteDb } from "./connection.ts";
import type { OrgBillingRepository } from "../repositories.ts";
import type { OrgSubscriptionRow } from "../org-billing-types.ts";
import type { UsageRow } from "../types.ts";
import { ENTITLING_STATUSES, MAX_USAGE_KEYS } from "../shared.ts";

const SUBSCRIPTION = `org_id AS orgId, source, app_id AS appId, plan_id AS planId, status, provider, provider_subscription_id AS providerSubscriptionId,
  current_period_end AS currentPeriodEnd, cancel_at_period_end AS cancelAtPeriodEnd, expires_at AS expiresAt, seats, created_at AS createdAt, updated_at AS updatedAt`;
const ENTITLING_SQL = ENTITLING_STATUSES.map((s) => `'${s}'`).join(", ");

type Raw = Omit<OrgSubscriptionRow, "cancelAtPeriodEnd"> & { cancelAtPeriodEnd: number };
const toRow = (r: Raw): OrgSubscriptionRow => ({ ...r, cancelAtPeriodEnd: r.cancelAtPeriodEnd === 1 });

export function createOrgBillingRepo(db: SqliteDb): OrgBillingRepository {
  const q = {
    subscriptions: db.prepare<[string, string], Raw>(`SELECT ${SUBSCRIPTION} FROM org_billing_subscriptions WHERE app_id = ? AND org_id = ?`),
    byProviderId: db.prepare<[string, string], Raw>(`SELECT ${SUBSCRIPTION} FROM org_billing_subscriptions WHERE app_id = ? AND provider_subscription_id = ?`),
    // As for tenants: a late event about an older subscription never replaces one that still grants access.
    upsertProvider: db.prepare(
      `INSERT INTO org_billing_subscriptions (org_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end, cancel_at_period_end, expires_at, seats, created_at, updated_at)
       VALUES (@orgId, 'billing_provider', @appId, @planId, @status, @provider, @providerSubscriptionId, @currentPeriodEnd, @cancelAtPeriodEnd, NULL, @seats, @now, @now)
       ON CONFLICT (org_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, provider = excluded.provider,
         provider_subscription_id = excluded.provider_subscription_id, current_period_end = excluded.current_period_end,
         cancel_at_period_end = excluded.cancel_at_period_end, seats = excluded.seats, updated_at = excluded.updated_at
       WHERE org_billing_subscriptions.app_id = excluded.app_id AND (
         org_billing_subscriptions.provider_subscription_id IS excluded.provider_subscription_id
         OR org_billing_subscriptions.status NOT IN (${ENTITLING_SQL})
         OR excluded.status IN (${ENTITLING_SQL}))`,
    ),
    setSeats: db.prepare<[number, number, string, string, string]>(
      "UPDATE org_billing_subscriptions SET seats = ?, updated_at = ? WHERE app_id = ? AND org_id = ? AND source = 'billing_provider' AND provider_subscription_id = ?",
    ),
    upsertGrant: db.prepare(
      `INSERT INTO org_billing_subscriptions (org_id, source, app_id, plan_id, status, provider, provider_subscription_id, current_period_end, cancel_at_period_end, expires_at, seats, created_at, updated_at)
       VALUES (@orgId, @source, @appId, @planId, @status, NULL, NULL, NULL, 0, @expiresAt, NULL, @now, @now)
       ON CONFLICT (org_id, source) DO UPDATE SET plan_id = excluded.plan_id, status = excluded.status, expires_at = excluded.expires_at,
         created_at = excluded.created_at, updated_at = excluded.updated_at
       WHERE org_billing_subscriptions.app_id = excluded.app_id`,
    ),
    removeSource: db.prepare<[string, string, string]>("DELETE FROM org_billing_subscriptions WHERE app_id = ? AND org_id = ? AND source = ?"),
    setCancel: db.prepare<[number, number, string, string]>(
      "UPDATE org_billing_subscriptions SET cancel_at_period_end = ?, updated_at = ? WHERE app_id = ? AND org_id = ? AND source = 'billing_provider' AND provider = 'dev'",
    ),
    customer: db.prepare<[string, string], { id: string }>("SELECT stripe_customer_id AS id FROM org_billing_customers WHERE app_id = ? AND org_id = ?"),
    orgByCustomer: db.prepare<[string, string], { orgId: string }>("SELECT org_id AS orgId FROM org_billing_customers WHERE app_id = ? AND stripe_customer_id = ?"),
    insertCustomer: db.prepare<[string, string, string, number]>(
      "INSERT INTO org_billing_customers (org_id, app_id, stripe_customer_id, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (org_id) DO NOTHING",
    ),
    usage: db.prepare<[string, string, string, string, number], { count: number }>(
      "SELECT count FROM org_billing_usage WHERE app_id = ? AND org_id = ? AND feature_key = ? AND period = ? AND period_start = ?",
    ),
    usageList: db.prepare<[string, string, number, number], UsageRow>(
      `SELECT feature_key AS featureKey, period, period_start AS periodStart, count FROM org_billing_usage
       WHERE app_id = ? AND org_id = ? AND ((period = 'monthly' AND period_start = ?) OR (period = 'daily' AND period_start = ?))
       ORDER BY feature_key, period`,
    ),
    // One statement, as for tenants: the limit check and the write cannot be split by a concurrent increment.
    increment: db
      .prepare<{ orgId: string; featureKey: string; period: string; periodStart: number; appId: string; by: number; limit: number | null }, number>(
        `INSERT INTO org_billing_usage (org_id, feature_key, period, period_start, app_id, count)
         SELECT @orgId, @featureKey, @period, @periodStart, @appId, @by
         WHERE (@limit IS NULL OR @by <= @limit) AND (
           EXISTS (SELECT 1 FROM org_billing_usage WHERE org_id = @orgId AND feature_key = @featureKey AND period = @period AND period_start = @periodStart)
           OR (SELECT COUNT(*) FROM org_billing_usage WHERE org_id = @orgId AND period = @period AND period_start = @periodStart) < ${MAX_USAGE_KEYS})
         ON CONFLICT (org_id, feature_key, period, period_start) DO UPDATE SET count = org_billing_usage.count + excluded.count
         WHERE org_billing_usage.app_id = excluded.app_id AND (@limit IS NULL OR org_billing_usage.count + excluded.count <= @limit)
         RETURNING count`,
      )
      .pluck(),
  };

  return {
    async subscriptions(appId, orgId) {
      return q.subscriptions.all(appId, orgId).map(toRow);
    },
    async findByProviderSubscription(appId, id) {
      const r = q.byProviderId.get(appId, id);
      return r && toRow(r);
    },
    async upsertProviderSubscription(s) {
      return q.upsertProvider.run({ ...s, cancelAtPeriodEnd: s.cancelAtPeriodEnd ? 1 : 0 }).changes > 0;
    },
    async setSeats(appId, orgId, providerSubscriptionId, seats, now) {
      return q.setSeats.run(seats, now, appId, orgId, providerSubscriptionId).changes > 0;
    },
    async upsertGrant(g) {
      q.upsertGrant.run({ ...g, status: g.source === "trial" ? "trialing" : "active" });
    },
    async removeSource(appId, orgId, source) {
      return q.removeSource.run(appId, orgId, source).changes > 0;
    },
    async setDevCancelAtPeriodEnd(appId, orgId, cancel, now) {
      return q.setCancel.run(cancel ? 1 : 0, now, appId, orgId).changes > 0;
    },
    async stripeCustomer(appId, orgId) {
      return q.customer.get(appId, orgId)?.id;
    },
    async orgForStripeCustomer(appId, customerId) {
      return q.orgByCustomer.get(appId, customerId)?.orgId;
    },
    async saveStripeCustomer(appId, orgId, customerId, now) {
      q.insertCustomer.run(orgId, appId, customerId, now);
      return q.customer.get(appId, orgId)!.id;
    },
    async usage(appId, orgId, featureKey, period, periodStart) {
      return q.usage.get(appId, orgId, featureKey, period, periodStart)?.count ?? 0;
    },
    async usageList(appId, orgId, monthStart, dayStart) {
      return q.usageList.all(appId, orgId, monthStart, dayStart);
    },
    async incrementUsage(u) {
      return q.increment.get({ orgId: u.orgId, featureKey: u.featureKey, period: u.period, periodStart: u.periodStart, appId: u.appId, by: u.by, limit: u.limit });
    },
  };
}
