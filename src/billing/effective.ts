import type { Core } from "../core.ts";
import { andThen, type Awaitable } from "../awaitable.ts";
import type { AppRow, PlanRow, SubscriptionRow } from "../db/types.ts";

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
  resolutionCaches.delete(core);
}

/** A subscription row of any owner (a tenant's, an organization's): what resolving reads of it. */
export type OwnedSubscriptionRow = Omit<SubscriptionRow, "tenantId">;

export interface Resolved {
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
  return pickSubscription(core, app, await core.db.billing.subscriptions(app.id, tenantId));
}

/** The precedence of ownSubscription over any owner's rows (an organization has the same sources). */
export async function pickSubscription<R extends OwnedSubscriptionRow>(core: Core, app: AppRow, rows: R[]): Promise<(Resolved & { row: R }) | null> {
  if (rows.length === 0) return null;
  const now = core.clock();
  for (const row of rows) {
    noteChangeAt(core, row.expiresAt, now);
    noteChangeAt(core, row.source === "billing_provider" ? providerState(row, now).periodEnd : row.currentPeriodEnd, now);
  }
  const bySource = (s: SubscriptionRow["source"]) => rows.find((r) => r.source === s);
  const provider = bySource("billing_provider");
  const providerView = provider && providerState(provider, now);
  const gift = bySource("gift");
  const trial = bySource("trial");
  const candidates: [R | undefined, boolean][] = [
    [providerView?.entitles ? provider : undefined, true],
    [gift && (gift.expiresAt === null || gift.expiresAt > now) ? gift : undefined, true],
    [trial && trial.expiresAt !== null && trial.expiresAt > now ? trial : undefined, true],
    [providerView && !providerView.entitles && providerView.status !== null ? provider : undefined, false],
  ];
  for (const [row, entitles] of candidates) {
    if (!row) continue;
    const plan = await core.db.billing.findPlan(app.id, row.planId);
    if (!plan) continue;
    return { plan, entitles, row, subscription: toSubscription(row, plan, now) };
  }
  return null;
}

/**
 * How a provider row reads now. A development-provider subscription renews by itself at
 * the end of each period unless it was set to cancel at period end; then it is canceled.
 * Stripe rows carry whatever Stripe last reported.
 */
export function providerState(row: OwnedSubscriptionRow, now: number, interval: PlanRow["interval"] = "month"): { status: Subscription["status"] | null; entitles: boolean; periodEnd: number | null } {
  let status = row.status;
  let periodEnd = row.currentPeriodEnd;
  if (row.provider === "dev" && periodEnd !== null && periodEnd <= now) {
    if (row.cancelAtPeriodEnd) status = "canceled";
    else periodEnd = devPeriodEnd(periodEnd, now, interval);
  }
  const shown = (["active", "past_due", "canceled", "trialing", "unpaid"] as const).find((s) => s === status) ?? null;
  return { status: shown, entitles: (ENTITLING_STATUSES as readonly string[]).includes(status), periodEnd };
}

export function toSubscription(row: OwnedSubscriptionRow, plan: PlanRow, now: number): Subscription {
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
async function resolveFresh(core: Core, app: AppRow, tenantId: string): Promise<Resolved | null> {
  const own = await ownSubscription(core, app, tenantId);
  if (own?.entitles) return own;
  const family = await familySubscriptionFor(core, app, tenantId);
  if (family) return { ...family, entitles: true };
  return own;
}

/** Tenants whose effective subscription is kept in memory per backend; past it the least recently used go. */
export const ENTITLEMENTS_CACHE_SIZE = 50_000;

interface CachedResolution {
  /** the app row it was read with: settings (default entitlements) change with the row */
  app: AppRow;
  version: number;
  /** clock time it was resolved at, and the first time at which it may read differently */
  from: number;
  until: number;
  resolved: Resolved | null;
}

interface ResolutionCache {
  entries: Map<string, CachedResolution>;
  /** horizons of resolutions in progress: every time-dependent row read lowers them */
  active: Set<{ until: number }>;
}

const resolutionCaches = new WeakMap<Core, ResolutionCache>();

function cacheOf(core: Core): ResolutionCache {
  let c = resolutionCaches.get(core);
  if (!c) {
    c = { entries: new Map(), active: new Set() };
    resolutionCaches.set(core, c);
  }
  return c;
}

/** A subscription read in progress changes its reading at `at` (expiry, period end): cached answers end there. */
function noteChangeAt(core: Core, at: number | null, now: number): void {
  if (at === null || at <= now) return;
  for (const h of cacheOf(core).active) if (at < h.until) h.until = at;
}

/**
 * The tenant's resolution, kept in memory while the engine's `entitlementsVersion` stays put
 * (no plan, subscription or family write by this process, nor one by another process seen
 * within 0.1 s) and until the first expiry or
 * period end among the rows it read, the owner's included for a family member. Engines
 * without a version (PostgreSQL) resolve on every call.
 */
function resolve(core: Core, app: AppRow, tenantId: string): Awaitable<Resolved | null> {
  const now = core.clock();
  const version = core.db.billing.entitlementsVersion?.(now);
  if (typeof version !== "number") return resolveFresh(core, app, tenantId);
  const cache = cacheOf(core);
  const key = `${app.id}\u0000${tenantId}`;
  const hit = cache.entries.get(key);
  if (hit && hit.app === app && hit.version === version && now >= hit.from && now < hit.until) {
    // A resolution in progress that asked for this one (a member's seat, from its owner's plan) ends when it does.
    for (const h of cache.active) if (hit.until < h.until) h.until = hit.until;
    // At once: a usage increment, say, then needs no promise for its limit.
    return hit.resolved;
  }
  return resolveAndKeep(core, app, tenantId, cache, key, version, now);
}

async function resolveAndKeep(core: Core, app: AppRow, tenantId: string, cache: ResolutionCache, key: string, version: number, now: number): Promise<Resolved | null> {
  const horizon = { until: Infinity };
  cache.active.add(horizon);
  let resolved: Resolved | null;
  try {
    resolved = await resolveFresh(core, app, tenantId);
  } finally {
    cache.active.delete(horizon);
  }
  for (const h of cache.active) if (horizon.until < h.until) h.until = horizon.until;
  cache.entries.delete(key);
  if (cache.entries.size >= ENTITLEMENTS_CACHE_SIZE) cache.entries.delete(cache.entries.keys().next().value!);
  // Stored under the version read before resolving: a write meanwhile makes it stale at once.
  cache.entries.set(key, { app, version, from: now, until: horizon.until, resolved });
  return resolved;
}

/**
 * The tenant's one effective subscription by PRODUCT.md's precedence (paid, gift, trial,
 * family), or null. Other areas (introspection, files quota, family) read it from here.
 */
export async function effectiveSubscription(core: Core, app: AppRow, tenantId: string): Promise<Subscription | null> {
  const resolved = await resolve(core, app, tenantId);
  return resolved ? { ...resolved.subscription } : null;
}

/** The plan's entitlements when the resolved subscription grants them; they go over the app's defaults. */
export const planEntitlements = (resolved: Resolved | null): Entitlements | undefined => (resolved?.entitles ? resolved.plan.entitlements : undefined);

/** The effective plan's entitlements over the app's default (free) entitlements. */
export function effectiveEntitlements(core: Core, app: AppRow, tenantId: string): Awaitable<Entitlements> {
  return andThen(resolve(core, app, tenantId), (resolved) => ({ ...app.settings.billing.defaultEntitlements, ...planEntitlements(resolved) }));
}

/**
 * One entry of `effectiveEntitlements`, read without copying the two maps into a new one:
 * a usage increment asks for its feature's limit on every call.
 */
export function effectiveEntitlement(core: Core, app: AppRow, tenantId: string, key: string): Awaitable<Entitlements[string] | undefined> {
  return andThen(resolve(core, app, tenantId), (resolved) => {
    const plan = planEntitlements(resolved);
    if (plan && Object.hasOwn(plan, key)) return plan[key];
    const defaults = app.settings.billing.defaultEntitlements;
    return Object.hasOwn(defaults, key) ? defaults[key] : undefined;
  });
}
