import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";

import type { PlanRow, SubscriptionRow } from "../db/types.ts";
import { toIso } from "../clock.ts";
import { devPeriodEnd } from "./periods.ts";
import type { Subscription } from "../types/resources.ts";
import { ENTITLING_STATUSES } from "../db/shared.ts";

/** The spec's Subscription object (one definition, in the public types). */
export type { Subscription };

export type Entitlements = Record<string, boolean | number>;

/** Who pays for a family member: the owner's tenant id and email, or null for no family. */
export type FamilyOwnerResolver = (app: AppRow, tenantId: string) => Promise<{ ownerTenantId: string; ownerEmail: string } | null>;

const familyResolvers = new WeakMap<Core, FamilyOwnerResolver>();

/**
 * The family area's hook: it tells billing who a member's owner is, and billing gives the
 * member the owner's own (paid, gift or trial) plan with `source: "family"`. Until a
 * resolver is set, nobody has a family subscription.
 */
export function setFamilyOwnerResolver(core: Core, resolver: FamilyOwnerResolver): void {
  familyResolvers.set(core, resolver);
}

interface Resolved {
  subscription: Subscription;
  plan: PlanRow;
  /** false for a provider subscription that is shown but grants nothing (unpaid, canceled) */
  entitles: boolean;
}

/**
 * The tenant's own subscriptions (no family) by precedence, at the clock's now: an entitling
 * provider subscription, then a live gift, then a live trial. Gifts and trials expire at
 * read time. A provider subscription that no longer entitles comes last, so it is shown
 * (status canceled or unpaid) only when nothing else applies.
 */
async function ownSubscription(core: Core, app: AppRow, tenantId: string): Promise<Resolved | null> {
  const rows = await core.db.billing.subscriptions(app.id, tenantId);
  if (rows.length === 0) return null;
  const now = core.clock();
  const bySource = (s: SubscriptionRow["source"]) => rows.find((r) => r.source === s);
  const provider = bySource("billing_provider");
  const providerView = provider && providerState(provider, now);
  const gift = bySource("gift");
  const trial = bySource("trial");
  const candidates: [SubscriptionRow | undefined, boolean][] = [
    [providerView?.entitles ? provider : undefined, true],
    [gift && (gift.expiresAt === null || gift.expiresAt > now) ? gift : undefined, true],
    [trial && trial.expiresAt !== null && trial.expiresAt > now ? trial : undefined, true],
    [providerView && !providerView.entitles && providerView.status !== null ? provider : undefined, false],
  ];
  for (const [row, entitles] of candidates) {
    if (!row) continue;
    const plan = await core.db.billing.findPlan(app.id, row.planId);
    if (!plan) continue;
    return { plan, entitles, subscription: toSubscription(row, plan, now) };
  }
  return null;
}

/**
 * How a provider row reads now. A development-provider subscription renews by itself at
 * the end of each period unless it was set to cancel at period end; then it is canceled.
 * Stripe rows carry whatever Stripe last reported.
 */
export function providerState(row: SubscriptionRow, now: number, interval: PlanRow["interval"] = "month"): { status: Subscription["status"] | null; entitles: boolean; periodEnd: number | null } {
  let status = row.status;
  let periodEnd = row.currentPeriodEnd;
  if (row.provider === "dev" && periodEnd !== null && periodEnd <= now) {
    if (row.cancelAtPeriodEnd) status = "canceled";
    else periodEnd = devPeriodEnd(periodEnd, now, interval);
  }
  const shown = (["active", "past_due", "canceled", "trialing", "unpaid"] as const).find((s) => s === status) ?? null;
  return { status: shown, entitles: (ENTITLING_STATUSES as readonly string[]).includes(status), periodEnd };
}

function toSubscription(row: SubscriptionRow, plan: PlanRow, now: number): Subscription {
  const base = { planId: plan.id, planName: plan.name, planSlug: plan.slug };
  if (row.source === "gift") {
    return { ...base, status: "active", currentPeriodEnd: toIso(row.expiresAt), cancelAtPeriodEnd: false, source: "gift", giftExpiresAt: toIso(row.expiresAt) };
  }
  if (row.source === "trial") {
    return { ...base, status: "trialing", currentPeriodEnd: toIso(row.expiresAt), cancelAtPeriodEnd: false, source: "trial", trialUntil: toIso(row.expiresAt) };
  }
  const state = providerState(row, now, plan.interval);
  return {
    ...base,
    status: state.status ?? "unpaid",
    currentPeriodEnd: toIso(state.periodEnd),
    cancelAtPeriodEnd: row.cancelAtPeriodEnd,
    source: "billing_provider",
  };
}

/** The tenant's provider subscription as a Subscription, whatever outranks it (the portal manages this one). */
export async function providerSubscription(core: Core, app: AppRow, tenantId: string): Promise<Subscription | null> {
  const row = (await core.db.billing.subscriptions(app.id, tenantId)).find((r) => r.source === "billing_provider");
  const plan = row && (await core.db.billing.findPlan(app.id, row.planId));
  return row && plan ? toSubscription(row, plan, core.clock()) : null;
}

/** The member's family subscription: the owner's own entitling plan, or null. */
export async function familySubscriptionFor(core: Core, app: AppRow, tenantId: string): Promise<{ subscription: Subscription; plan: PlanRow } | null> {
  const resolver = familyResolvers.get(core);
  const owner = resolver ? await resolver(app, tenantId) : null;
  if (!owner || owner.ownerTenantId === tenantId) return null;
  const own = await ownSubscription(core, app, owner.ownerTenantId);
  if (!own?.entitles) return null;
  const { subscription, plan } = own;
  return {
    plan,
    subscription: {
      planId: subscription.planId,
      planName: subscription.planName,
      planSlug: subscription.planSlug,
      status: subscription.status,
      currentPeriodEnd: subscription.currentPeriodEnd,
      cancelAtPeriodEnd: subscription.cancelAtPeriodEnd,
      source: "family",
      familyOwnerEmail: owner.ownerEmail,
    },
  };
}

/** Precedence (PRODUCT.md): entitling paid > gift > trial > family; a lapsed paid one is shown last. */
async function resolve(core: Core, app: AppRow, tenantId: string): Promise<Resolved | null> {
  const own = await ownSubscription(core, app, tenantId);
  if (own?.entitles) return own;
  const family = await familySubscriptionFor(core, app, tenantId);
  if (family) return { ...family, entitles: true };
  return own;
}

/**
 * The tenant's one effective subscription by PRODUCT.md's precedence (paid, gift, trial,
 * family), or null. Other areas (introspection, files quota, family) read it from here.
 */
export async function effectiveSubscription(core: Core, app: AppRow, tenantId: string): Promise<Subscription | null> {
  return (await resolve(core, app, tenantId))?.subscription ?? null;
}

/** The effective plan's entitlements over the app's default (free) entitlements. */
export async function effectiveEntitlements(core: Core, app: AppRow, tenantId: string): Promise<Entitlements> {
  const resolved = await resolve(core, app, tenantId);
  const defaults = app.settings.billing.defaultEntitlements;
  return resolved?.entitles ? { ...defaults, ...resolved.plan.entitlements } : { ...defaults };
}
