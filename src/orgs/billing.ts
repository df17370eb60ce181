import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { CheckoutBody, requireAppUrl, requireDevBilling, stripeCheckout } from "../billing/checkout.ts";
import { createDevCheckout, createDevPortal } from "../billing/dev-provider.ts";
import { pickSubscription, planEntitlements, type Entitlements } from "../billing/effective.ts";
import { billingSources, giftTerms, trialTerms } from "../billing/grants.ts";
import { requirePlan } from "../billing/plans.ts";
import { periodStart, type UsagePeriod } from "../billing/periods.ts";
import { callStripe, stripeFor } from "../billing/stripe.ts";
import { META } from "../billing/stripe-sync.ts";
import { asLimit, limitFor, usageRefusal, type UsageCounter } from "../billing/usage.ts";
import { bodyObject } from "../invites/shape.ts";
import { toAdminOrg } from "./admin.ts";
import { orgChanged, type OrgActor } from "./events.ts";
import { orgSeats } from "./invites.ts";
import { requireMember } from "./orgs.ts";
import { requirePermission } from "./roles.ts";
import { paidSubscription, providerRowOf, pushSeats } from "./billing-seats.ts";

/** The most seats one organization's subscription may hold. */
export const MAX_SEATS = 100_000;
const seatCount = v.pipe(v.number("must be a number"), v.integer("must be a whole number"), v.minValue(1, "must be at least 1"), v.maxValue(MAX_SEATS, `must be at most ${MAX_SEATS}`));
export const OrgCheckoutBody = v.object({ ...CheckoutBody.entries, seats: v.optional(seatCount) });
export const SeatsBody = bodyObject({ seats: seatCount });

async function requireBilling(core: Core, app: AppRow, orgId: string, tenantId: string) {
  const org = await requireMember(core, app, orgId, tenantId);
  requirePermission(app, org, "billing.manage");
  return org;
}

/** Seats in use: members, and pending email invites unless joins buy their seats (auto). */
async function seatsInUse(core: Core, app: AppRow, orgId: string): Promise<number> {
  const { members, pending } = await core.db.orgs.seatCounts(app.id, orgId, core.clock());
  return app.settings.orgs.seatBilling === "auto" ? members : members + pending;
}

/** The organization's one subscription by precedence (paid, gift, trial), with what it grants. */
async function resolveOrg(core: Core, app: AppRow, orgId: string) {
  const resolved = await pickSubscription(core, app, await core.db.orgBilling.subscriptions(app.id, orgId));
  const entitlements: Entitlements = { ...app.settings.billing.defaultEntitlements, ...planEntitlements(resolved) };
  return { subscription: resolved ? { ...resolved.subscription } : null, entitlements };
}

export async function orgEntitlements(core: Core, app: AppRow, orgId: string): Promise<Entitlements> {
  return (await resolveOrg(core, app, orgId)).entitlements;
}

async function usageList(core: Core, app: AppRow, orgId: string, entitlements: Entitlements) {
  const now = core.clock();
  const rows = await core.db.orgBilling.usageList(app.id, orgId, periodStart("monthly", now), periodStart("daily", now));
  return rows.map((r) => ({ featureKey: r.featureKey, period: r.period, count: r.count, limit: limitFor(entitlements, r.featureKey) }));
}

/** What every member may read: the subscription, entitlements, seats and this period's counters. */
export async function orgBilling(core: Core, app: AppRow, tenantId: string, orgId: string) {
  await requireMember(core, app, orgId, tenantId);
  return orgBillingView(core, app, orgId);
}

async function orgBillingView(core: Core, app: AppRow, orgId: string) {
  const { subscription, entitlements } = await resolveOrg(core, app, orgId);
  const seats = await orgSeats(core, app, orgId);
  return { subscription: subscription && { ...subscription, seats: (await paidSubscription(core, app, orgId))?.seats ?? null }, entitlements, seats, usage: await usageList(core, app, orgId, entitlements) };
}

/**
 * A checkout of `seats` seats (default: the seats in use, at least 1) of a plan for the
 * organization: Stripe Checkout, or the development page. One that already pays is sent to the portal.
 */
export async function startOrgCheckout(core: Core, app: AppRow, tenantId: string, orgId: string, body: v.InferOutput<typeof OrgCheckoutBody>): Promise<{ url: string }> {
  const org = await requireBilling(core, app, orgId, tenantId);
  requireAppUrl(app, body.successUrl, "successUrl");
  requireAppUrl(app, body.cancelUrl, "cancelUrl");
  const plan = await requirePlan(core, app, body.planId, { offered: true });
  if (await paidSubscription(core, app, orgId)) {
    throw fail("conflict", "This organization already has a paid subscription: change its seats (PUT …/billing/seats) or manage it through the billing portal (POST …/billing/portal).");
  }
  const inUse = await seatsInUse(core, app, orgId);
  const seats = body.seats ?? Math.max(1, inUse);
  if (seats < inUse) throw fail("invalid_request", `body.seats: ${inUse} seats are in use (members and pending invites); buy at least that many.`);
  const stripe = stripeFor(core, app);
  if (!stripe) {
    requireDevBilling(core);
    if (body.currency && body.currency !== plan.currency) throw fail("invalid_request", `body.currency: plan ${plan.slug} is priced in ${plan.currency}.`);
    return createDevCheckout(core, app, tenantId, plan, body.successUrl, body.cancelUrl, { orgId, seats });
  }
  if (!plan.stripePriceId) {
    throw fail("conflict", `Plan ${plan.slug} has no Stripe price yet: the developer links one (stripePriceId) or runs tenantd plan sync-stripe.`);
  }
  let customer = await core.db.orgBilling.stripeCustomer(app.id, orgId);
  if (!customer) {
    const email = (await core.db.tenants.findById(app.id, tenantId))?.email;
    const created = await callStripe(core, "create the customer", () =>
      stripe.customers.create({ name: org.name, ...(email ? { email } : {}), metadata: { [META.app]: app.id, [META.org]: orgId } }),
    );
    customer = await core.db.orgBilling.saveStripeCustomer(app.id, orgId, created.id, core.clock());
  }
  const metadata = { [META.app]: app.id, [META.org]: orgId, [META.plan]: plan.id };
  return stripeCheckout(core, stripe, { customer, reference: orgId, priceId: plan.stripePriceId, quantity: seats, metadata, body });
}

/** The billing portal of the organization's provider. */
export async function openOrgPortal(core: Core, app: AppRow, tenantId: string, orgId: string, returnUrl: string): Promise<{ url: string }> {
  await requireBilling(core, app, orgId, tenantId);
  requireAppUrl(app, returnUrl, "returnUrl");
  const current = await providerRowOf(core, app, orgId);
  const stripe = stripeFor(core, app);
  if (current?.provider === "dev" || !stripe) {
    requireDevBilling(core);
    if (current?.provider !== "dev") throw fail("conflict", "This organization has no subscription to manage yet: start one with POST …/billing/checkout.");
    return createDevPortal(core, app, tenantId, returnUrl, { orgId, seats: current.seats ?? 1 });
  }
  const customer = await core.db.orgBilling.stripeCustomer(app.id, orgId);
  if (!customer) throw fail("conflict", "This organization has no Stripe customer yet: start a subscription with POST …/billing/checkout first.");
  const session = await callStripe(core, "create the billing portal session", () => stripe.billingPortal.sessions.create({ customer, return_url: returnUrl }));
  return { url: session.url };
}

/** Sets the paid seats (the subscription's quantity); never below the seats in use. */
export async function setOrgSeats(core: Core, app: AppRow, tenantId: string, orgId: string, seats: number) {
  await requireBilling(core, app, orgId, tenantId);
  const paid = await paidSubscription(core, app, orgId);
  if (!paid) throw fail("conflict", "This organization has no paid subscription to add seats to: start one with POST …/billing/checkout.");
  const inUse = await seatsInUse(core, app, orgId);
  if (seats < inUse) throw fail("conflict", `${inUse} seats are in use (members and pending invites): remove members or revoke invites before going down to ${seats}.`);
  if (seats !== paid.seats) await pushSeats(core, app, paid, seats);
  return orgBillingView(core, app, orgId);
}

export async function readOrgUsage(core: Core, app: AppRow, tenantId: string, orgId: string, featureKey: string, p: UsagePeriod): Promise<UsageCounter> {
  await requireMember(core, app, orgId, tenantId);
  const limit = limitFor(await orgEntitlements(core, app, orgId), featureKey);
  const count = await core.db.orgBilling.usage(app.id, orgId, featureKey, p, periodStart(p, core.clock()));
  return { count, period: p, limit };
}

/** Adds `by` to the organization's counter in the current UTC period; past its limit nothing changes and it is 402. */
export async function incrementOrgUsage(core: Core, app: AppRow, tenantId: string, orgId: string, featureKey: string, input: { by: number; period: UsagePeriod }): Promise<UsageCounter> {
  await requireMember(core, app, orgId, tenantId);
  const entitlements = await orgEntitlements(core, app, orgId);
  const limit = asLimit(Object.hasOwn(entitlements, featureKey) ? entitlements[featureKey] : undefined);
  const start = periodStart(input.period, core.clock());
  const count = await core.db.orgBilling.incrementUsage({ appId: app.id, orgId, featureKey, period: input.period, periodStart: start, by: input.by, limit });
  if (count === undefined) throw usageRefusal(await core.db.orgBilling.usage(app.id, orgId, featureKey, input.period, start), "an organization", featureKey, input, limit);
  return { count, period: input.period, limit };
}

// The developer's side (admin API): an organization's billing, gifts and trials.

async function requireOrg(core: Core, app: AppRow, orgId: string) {
  const org = await core.db.orgs.byId(app.id, orgId);
  if (!org) throw fail("not_found", `No organization ${orgId} in this app.`);
  return org;
}

export async function adminOrgBilling(core: Core, app: AppRow, orgId: string) {
  const org = await requireOrg(core, app, orgId);
  return {
    org: toAdminOrg(org),
    ...(await orgBillingView(core, app, orgId)),
    sources: await billingSources(core, app, await core.db.orgBilling.subscriptions(app.id, orgId)),
    stripeCustomerId: (await core.db.orgBilling.stripeCustomer(app.id, orgId)) ?? null,
  };
}

/** Grants (or replaces) an organization's gift or trial: the bodies and rules of the tenant ones. */
export async function grantOrg(core: Core, app: AppRow, actor: OrgActor, orgId: string, kind: "gift" | "trial", raw: unknown) {
  await requireOrg(core, app, orgId);
  const { plan, expiresAt, now } = kind === "gift" ? await giftTerms(core, app, raw) : await trialTerms(core, app, raw);
  await core.db.orgBilling.upsertGrant({ appId: app.id, orgId, source: kind, planId: plan.id, expiresAt, now });
  await orgChanged(core, app, actor, "org.subscription.updated", orgId, { source: kind, change: "granted", planId: plan.id, expiresAt: expiresAt === null ? null : new Date(expiresAt).toISOString() });
  return adminOrgBilling(core, app, orgId);
}

/** Takes a gift back, or ends a trial now; a paid subscription is untouched. */
export async function revokeOrgGrant(core: Core, app: AppRow, actor: OrgActor, orgId: string, kind: "gift" | "trial"): Promise<void> {
  await requireOrg(core, app, orgId);
  if (!(await core.db.orgBilling.removeSource(app.id, orgId, kind))) throw fail("not_found", `This organization has no ${kind} to ${kind === "gift" ? "revoke" : "end"}.`);
  await orgChanged(core, app, actor, "org.subscription.updated", orgId, { source: kind, change: "revoked" });
}
