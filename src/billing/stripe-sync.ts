import type Stripe from "stripe";
import type { Core } from "../core.ts";
import type { AppRow, PlanRow } from "../db/types.ts";
import { callStripe, isStripeMissing, requireStripe, stripeFor } from "./stripe.ts";
import { requirePlan } from "./plans.ts";
import { orgChanged } from "../orgs/events.ts";
import type { OrgSubscriptionRow } from "../db/org-billing-types.ts";

/** Metadata keys tenantd puts on Stripe objects so events map back to an app, tenant (or organization) and plan. */
export const META = { app: "tenantd_app", tenant: "tenantd_tenant", plan: "tenantd_plan", org: "tenantd_org" } as const;

/** Where a Stripe object belongs when the event itself says so (checkout's reference). */
export interface SubscriptionHint {
  tenantId?: string;
  orgId?: string;
}

/**
 * Makes sure the plan has a Stripe product and a Stripe price matching its price, currency
 * and interval. Prices are immutable in Stripe: when the linked one no longer matches, a
 * new one is created and linked; the old one keeps billing existing subscribers.
 */
export async function syncPlanToStripe(core: Core, app: AppRow, planRef: string): Promise<PlanRow> {
  const stripe = requireStripe(core, app);
  const plan = await requirePlan(core, app, planRef);
  const metadata = { [META.app]: app.id, [META.plan]: plan.id };
  let productId = plan.stripeProductId;
  if (plan.stripePriceId) {
    const price = await callStripe(core, "read the linked price", () => stripe.prices.retrieve(plan.stripePriceId!));
    productId ??= typeof price.product === "string" ? price.product : price.product.id;
    const matches = price.active && price.unit_amount === plan.priceCents && price.currency === plan.currency && price.recurring?.interval === plan.interval;
    if (matches) return save(core, { ...plan, stripeProductId: productId });
  }
  if (!productId) {
    const product = await callStripe(core, "create the product", () =>
      stripe.products.create({ name: plan.name, ...(plan.description ? { description: plan.description } : {}), metadata }),
    );
    productId = product.id;
  }
  const price = await callStripe(core, "create the price", () =>
    stripe.prices.create({ product: productId!, unit_amount: plan.priceCents, currency: plan.currency, recurring: { interval: plan.interval }, metadata }),
  );
  return save(core, { ...plan, stripeProductId: productId, stripePriceId: price.id });
}

async function save(core: Core, plan: PlanRow): Promise<PlanRow> {
  const next = { ...plan, updatedAt: core.clock() };
  await core.db.billing.updatePlan(next);
  return next;
}

/** Stripe statuses outside the spec's list are stored as the nearest one that says the same. */
function toStatus(status: Stripe.Subscription.Status): string {
  if (status === "incomplete_expired") return "canceled";
  if (status === "paused") return "unpaid";
  return status;
}

// Events about one subscription are applied one at a time, so two re-reads racing each
// other cannot write an older answer over a newer one.
const chains = new Map<string, Promise<unknown>>();
export function serialize<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = chains.get(key) ?? Promise.resolve();
  const run = prev.catch(() => undefined).then(fn);
  chains.set(key, run);
  void run.finally(() => {
    if (chains.get(key) === run) chains.delete(key);
  }).catch(() => undefined);
  return run;
}

/**
 * Re-reads the subscription from Stripe and stores what Stripe says now. Events only tell
 * us which subscription changed; the state always comes from Stripe, so events arriving
 * late or out of order cannot move a subscription backwards.
 */
export async function refreshStripeSubscription(core: Core, app: AppRow, subscriptionId: string, hint: SubscriptionHint = {}): Promise<void> {
  const stripe = requireStripe(core, app);
  await serialize(`${app.id}:${subscriptionId}`, async () => {
    const sub = await callStripe(core, "read the subscription", async () => {
      try {
        return await stripe.subscriptions.retrieve(subscriptionId);
      } catch (e) {
        if (isStripeMissing(e)) return null;
        throw e;
      }
    });
    if (!sub) {
      core.log.info("stripe subscription not found; event ignored", { app: app.id, subscription: subscriptionId });
      return;
    }
    await storeStripeSubscription(core, app, sub, hint);
  });
}

export async function storeStripeSubscription(core: Core, app: AppRow, sub: Stripe.Subscription, hint: SubscriptionHint): Promise<void> {
  const forApp = sub.metadata?.[META.app];
  if (forApp && forApp !== app.id) {
    core.log.info("stripe subscription of another tenantd app on the same Stripe account; ignored", { app: app.id, subscription: sub.id });
    return;
  }
  const customerId = typeof sub.customer === "string" ? sub.customer : sub.customer.id;
  const orgId = await orgOf(core, app, sub, customerId, hint);
  if (orgId !== undefined) return storeOrgSubscription(core, app, sub, orgId, customerId);
  const tenantId =
    hint.tenantId ??
    sub.metadata?.[META.tenant] ??
    (await core.db.billing.findByProviderSubscription(app.id, sub.id))?.tenantId ??
    (await core.db.billing.tenantForStripeCustomer(app.id, customerId));
  if (!tenantId || !(await core.db.tenants.findById(app.id, tenantId))) {
    core.log.info("stripe subscription for no tenant of this app; ignored", { app: app.id, subscription: sub.id });
    return;
  }
  const state = await stripeState(core, app, sub);
  if (!state) return;
  await core.db.billing.saveStripeCustomer(app.id, tenantId, customerId, state.now);
  await core.db.billing.upsertProviderSubscription({ ...state, tenantId });
  await core.hooks.emit("billing.subscriptionChanged", { app, tenantId, planId: state.planId, status: state.status, provider: "stripe" });
}

/** What tenantd stores of a Stripe subscription, whoever it is for; undefined (logged) when its price is linked to no plan. */
async function stripeState(core: Core, app: AppRow, sub: Stripe.Subscription) {
  const plan = await planOf(core, app, sub);
  if (!plan) {
    core.log.error("stripe subscription whose price is linked to no plan; link the price to a plan", { app: app.id, subscription: sub.id });
    return undefined;
  }
  const periodEnds = sub.items.data.map((i) => i.current_period_end).filter((n): n is number => typeof n === "number");
  return {
    appId: app.id,
    planId: plan.id,
    status: toStatus(sub.status),
    provider: "stripe" as const,
    providerSubscriptionId: sub.id,
    currentPeriodEnd: periodEnds.length ? Math.max(...periodEnds) * 1000 : null,
    cancelAtPeriodEnd: sub.status !== "canceled" && (sub.cancel_at_period_end || sub.cancel_at !== null),
    now: core.clock(),
  };
}

/** The organization a subscription is for: named at checkout, or known by its id or customer; never one a tenant's names. */
async function orgOf(core: Core, app: AppRow, sub: Stripe.Subscription, customerId: string, hint: SubscriptionHint): Promise<string | undefined> {
  if (hint.tenantId !== undefined || sub.metadata?.[META.tenant]) return undefined;
  return (
    hint.orgId ??
    sub.metadata?.[META.org] ??
    (await core.db.orgBilling.findByProviderSubscription(app.id, sub.id))?.orgId ??
    (await core.db.orgBilling.orgForStripeCustomer(app.id, customerId))
  );
}

/** Paid seats: the quantity of the subscription's first item (the plan's price), at least 1. */
export const seatsOf = (sub: Stripe.Subscription): number => Math.max(1, sub.items.data[0]?.quantity ?? 1);

async function storeOrgSubscription(core: Core, app: AppRow, sub: Stripe.Subscription, orgId: string, customerId: string): Promise<void> {
  if (!(await core.db.orgs.byId(app.id, orgId))) {
    core.log.info("stripe subscription for no organization of this app; ignored", { app: app.id, subscription: sub.id });
    return;
  }
  const state = await stripeState(core, app, sub);
  if (!state) return;
  await core.db.orgBilling.saveStripeCustomer(app.id, orgId, customerId, state.now);
  await writeOrgProviderSubscription(core, app, { ...state, orgId, seats: seatsOf(sub) });
}

/**
 * Stores an organization's provider subscription and, when its plan, status, seats or
 * cancellation changed, says so in the trail and as `org.subscription.updated`.
 */
export async function writeOrgProviderSubscription(core: Core, app: AppRow, w: Parameters<Core["db"]["orgBilling"]["upsertProviderSubscription"]>[0]): Promise<void> {
  const before = (await core.db.orgBilling.subscriptions(app.id, w.orgId)).find((r) => r.source === "billing_provider");
  if (!(await core.db.orgBilling.upsertProviderSubscription(w))) return;
  const same = (r: OrgSubscriptionRow | undefined) =>
    r && r.planId === w.planId && r.status === w.status && r.seats === w.seats && r.cancelAtPeriodEnd === w.cancelAtPeriodEnd && r.providerSubscriptionId === w.providerSubscriptionId;
  if (same(before)) return;
  const details = { source: "billing_provider", provider: w.provider, planId: w.planId, status: w.status, seats: w.seats, cancelAtPeriodEnd: w.cancelAtPeriodEnd };
  await orgChanged(core, app, { tenantId: null, by: { type: "system" } }, "org.subscription.updated", w.orgId, details);
}

/** The plan named in the subscription's metadata (set at checkout), else the one linked to its price. */
async function planOf(core: Core, app: AppRow, sub: Stripe.Subscription): Promise<PlanRow | undefined> {
  const named = sub.metadata?.[META.plan];
  const byMeta = named ? await core.db.billing.findPlan(app.id, named) : undefined;
  if (byMeta) return byMeta;
  for (const item of sub.items.data) {
    const plan = await core.db.billing.findPlanByStripePrice(app.id, item.price.id);
    if (plan) return plan;
  }
  return undefined;
}

/**
 * Cancels the tenant's live Stripe subscription at once (account deletion). A subscription
 * Stripe no longer knows is fine; any other Stripe failure stops the deletion, so nobody
 * keeps paying for an account that is gone.
 */
export async function cancelStripeSubscriptionOf(core: Core, app: AppRow, tenantId: string): Promise<void> {
  await cancelStripeRow(core, app, await core.db.billing.subscriptions(app.id, tenantId), "tenant");
}

/** The same for an organization being deleted. */
export async function cancelOrgStripeSubscription(core: Core, app: AppRow, orgId: string): Promise<void> {
  await cancelStripeRow(core, app, await core.db.orgBilling.subscriptions(app.id, orgId), "organization");
}

async function cancelStripeRow(core: Core, app: AppRow, rows: { source: string; provider: string | null; providerSubscriptionId: string | null; status: string }[], owner: string): Promise<void> {
  const row = rows.find((s) => s.source === "billing_provider" && s.provider === "stripe");
  if (!row?.providerSubscriptionId || row.status === "canceled") return;
  const stripe = stripeFor(core, app);
  if (!stripe) {
    core.log.error(`${owner} deleted with a Stripe subscription, but the app has no Stripe key to cancel it`, { app: app.id, subscription: row.providerSubscriptionId });
    return;
  }
  const id = row.providerSubscriptionId;
  await callStripe(core, "cancel the subscription", async () => {
    try {
      await stripe.subscriptions.cancel(id);
    } catch (e) {
      if (!isStripeMissing(e)) throw e;
    }
  });
}
