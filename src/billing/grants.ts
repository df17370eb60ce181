import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { parseInput } from "../http/body.ts";
import { toIso } from "../clock.ts";
import { requirePlan, toPlanInfo } from "./plans.ts";
import { effectiveEntitlements, effectiveSubscription, type OwnedSubscriptionRow } from "./effective.ts";
import { usageOverview } from "./usage.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
const days = v.pipe(v.number(), v.integer("must be a whole number of days"), v.minValue(1, "must be at least 1"), v.maxValue(36_500, "must be at most 36500"));
const isoDate = v.pipe(v.string(), v.isoTimestamp("must be an ISO 8601 timestamp like 2027-01-01T00:00:00Z"));

export const GiftBody = v.object({
  planId: v.pipe(v.string(), v.minLength(1, "is required")),
  /** ISO timestamp, or null/absent for a permanent gift. */
  expiresAt: v.optional(v.nullable(isoDate)),
  /** alternative to expiresAt: the gift lasts this many days from now */
  days: v.optional(days),
});
export const TrialBody = v.object({
  planId: v.optional(v.pipe(v.string(), v.minLength(1))),
  days: v.optional(days),
});

/** A gift's plan and expiry from its body (a tenant's or an organization's); archived plans may be gifted, it is the developer's call. */
export async function giftTerms(core: Core, app: AppRow, raw: unknown) {
  const input = parseInput(GiftBody, raw);
  if (input.expiresAt && input.days !== undefined) throw fail("invalid_request", "body: give expiresAt or days, not both.");
  const plan = await requirePlan(core, app, input.planId);
  const now = core.clock();
  const expiresAt = input.days !== undefined ? now + input.days * DAY_MS : input.expiresAt ? Date.parse(input.expiresAt) : null;
  if (expiresAt !== null && expiresAt <= now) throw fail("invalid_request", "body.expiresAt: must be in the future.");
  return { plan, expiresAt, now };
}

/** A trial's plan and end from its body; plan and length default to the app's trial settings. */
export async function trialTerms(core: Core, app: AppRow, raw: unknown) {
  const input = parseInput(TrialBody, raw);
  const settings = app.settings.billing.trial;
  const planId = input.planId ?? settings?.planId;
  const length = input.days ?? settings?.days;
  if (!planId || !length) throw fail("invalid_request", "body: give planId and days (the app has no trial settings to default to).");
  const plan = await requirePlan(core, app, planId);
  // Signup trials skip an archived plan too: a trial is an offer, and archived plans are no longer offered.
  if (plan.archivedAt !== null) throw fail("invalid_request", `body.planId: plan ${plan.slug} is archived; trials are of offered plans only (unarchive it first).`);
  const now = core.clock();
  return { plan, expiresAt: now + length * DAY_MS, now };
}

/** A gift's or trial's terms written for the tenant, told to its streams; the tenant's billing as it now is. */
async function grant(core: Core, app: AppRow, tenant: TenantRow, source: "gift" | "trial", { plan, expiresAt, now }: Awaited<ReturnType<typeof giftTerms>>) {
  await core.db.billing.upsertGrant({ appId: app.id, tenantId: tenant.id, source, planId: plan.id, expiresAt, now });
  await core.realtime?.tenantEvent(app.id, tenant.id, "entitlements", { source, change: "granted", planId: plan.id });
  return tenantBilling(core, app, tenant);
}

/** Grants (or replaces) a gift. */
export async function grantGift(core: Core, app: AppRow, tenant: TenantRow, raw: v.InferInput<typeof GiftBody>) {
  return grant(core, app, tenant, "gift", await giftTerms(core, app, raw));
}

export async function revokeGift(core: Core, app: AppRow, tenant: TenantRow): Promise<void> {
  if (!(await core.db.billing.removeSource(app.id, tenant.id, "gift"))) throw fail("not_found", "This tenant has no gift to revoke.");
  await core.realtime?.tenantEvent(app.id, tenant.id, "entitlements", { source: "gift", change: "revoked" });
}

/** Grants (or restarts) a trial. */
export async function grantTrial(core: Core, app: AppRow, tenant: TenantRow, raw: v.InferInput<typeof TrialBody>) {
  return grant(core, app, tenant, "trial", await trialTerms(core, app, raw));
}

/** The signup trial from `app.settings.billing.trial`, when the plan still exists and is offered. */
export async function startSignupTrial(core: Core, app: AppRow, tenantId: string): Promise<void> {
  const trial = app.settings.billing.trial;
  if (!trial) return;
  const plan = (await core.db.billing.findPlan(app.id, trial.planId)) ?? (await core.db.billing.findPlanBySlug(app.id, trial.planId));
  if (!plan || plan.archivedAt !== null) {
    core.log.error("signup trial skipped: settings.billing.trial.planId names no offered plan", { app: app.id, planId: trial.planId });
    return;
  }
  const now = core.clock();
  await core.db.billing.upsertGrant({ appId: app.id, tenantId, source: "trial", planId: plan.id, expiresAt: now + trial.days * DAY_MS, now });
}

/** What the developer sees about one tenant's billing. */
export async function tenantBilling(core: Core, app: AppRow, tenant: TenantRow) {
  return {
    tenantId: tenant.id,
    subscription: await effectiveSubscription(core, app, tenant.id),
    entitlements: await effectiveEntitlements(core, app, tenant.id),
    sources: await billingSources(core, app, await core.db.billing.subscriptions(app.id, tenant.id)),
    stripeCustomerId: (await core.db.billing.stripeCustomer(app.id, tenant.id)) ?? null,
    usage: await usageOverview(core, app, tenant.id),
  };
}

/** Every subscription row of an owner as the developer sees it, with its plan. */
export async function billingSources(core: Core, app: AppRow, rows: (OwnedSubscriptionRow & { seats?: number | null })[]) {
  const plans = await core.db.billing.listPlans(app.id, { includeArchived: true });
  const planById = new Map(plans.map((p) => [p.id, p]));
  return rows.map((r) => ({
      source: r.source,
      plan: planById.has(r.planId) ? toPlanInfo(planById.get(r.planId)!) : null,
      status: r.status,
      provider: r.provider,
      providerSubscriptionId: r.providerSubscriptionId,
      currentPeriodEnd: toIso(r.currentPeriodEnd),
      cancelAtPeriodEnd: r.cancelAtPeriodEnd,
      expiresAt: toIso(r.expiresAt),
      updatedAt: toIso(r.updatedAt),
      ...(r.seats !== undefined && { seats: r.seats }),
  }));
}
