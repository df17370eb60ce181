import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow, PlanRow } from "../db/types.ts";
import { newId } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";
import { parseInput } from "../http/body.ts";

const name = v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(100, "is at most 100 characters"));
const slug = v.pipe(v.string(), v.regex(/^[a-z0-9][a-z0-9-]{0,63}$/, "must be 1-64 lower-case letters, digits or dashes, starting with a letter or digit"));
const description = v.nullable(v.pipe(v.string(), v.maxLength(1000, "is at most 1000 characters")));
const priceCents = v.pipe(v.number(), v.integer("must be a whole number of cents"), v.minValue(0), v.maxValue(99_999_999));
const currency = v.pipe(v.string(), v.toLowerCase(), v.regex(/^[a-z]{3}$/, "must be a three-letter ISO currency code like usd"));
const interval = v.picklist(["month", "year"], "must be month or year");
const sortOrder = v.pipe(v.number(), v.integer(), v.minValue(-1_000_000), v.maxValue(1_000_000));
export const EntitlementsSchema = v.record(
  v.pipe(v.string(), v.regex(/^[A-Za-z0-9_.:-]{1,64}$/, "keys are 1-64 letters, digits, _ . : or -")),
  v.union([v.boolean(), v.pipe(v.number(), v.minValue(0))], "must be a boolean or a number >= 0"),
);
const stripePriceId = v.nullable(v.pipe(v.string(), v.regex(/^price_[A-Za-z0-9_]+$/, "must be a Stripe price id (price_…)")));

export const CreatePlanSchema = v.strictObject({
  name,
  slug,
  description: v.optional(description, null),
  priceCents,
  currency: v.optional(currency, "usd"),
  interval: v.optional(interval, "month"),
  sortOrder: v.optional(sortOrder, 0),
  entitlements: v.optional(EntitlementsSchema, {}),
  stripePriceId: v.optional(stripePriceId, null),
});
export const UpdatePlanSchema = v.strictObject({
  name: v.optional(name),
  slug: v.optional(slug),
  description: v.optional(description),
  priceCents: v.optional(priceCents),
  currency: v.optional(currency),
  interval: v.optional(interval),
  sortOrder: v.optional(sortOrder),
  entitlements: v.optional(EntitlementsSchema),
  stripePriceId: v.optional(stripePriceId),
});
export type CreatePlanInput = v.InferInput<typeof CreatePlanSchema>;
export type UpdatePlanInput = v.InferInput<typeof UpdatePlanSchema>;

/** The spec's PlanInfo. */
export function toPlanInfo(p: PlanRow) {
  return {
    id: p.id,
    name: p.name,
    slug: p.slug,
    description: p.description,
    priceCents: p.priceCents,
    currency: p.currency,
    interval: p.interval,
    sortOrder: p.sortOrder,
    entitlements: p.entitlements,
  };
}

/** The developer's view: PlanInfo plus the Stripe link and archive state. */
export function toAdminPlan(p: PlanRow) {
  return {
    ...toPlanInfo(p),
    stripeProductId: p.stripeProductId,
    stripePriceId: p.stripePriceId,
    archived: p.archivedAt !== null,
    archivedAt: toIso(p.archivedAt),
    createdAt: toIso(p.createdAt)!,
    updatedAt: toIso(p.updatedAt)!,
  };
}

/** A plan of this app by id or slug; another app's plan is not found. */
export async function requirePlan(core: Core, app: AppRow, ref: string, opts: { offered?: boolean } = {}): Promise<PlanRow> {
  const plan = (await core.db.billing.findPlan(app.id, ref)) ?? (await core.db.billing.findPlanBySlug(app.id, ref));
  if (!plan) throw fail("not_found", `No plan "${ref}" in this app. List plans with GET /api/v1/billing/plans.`);
  if (opts.offered && plan.archivedAt !== null) throw fail("not_found", `Plan "${ref}" is archived and can no longer be chosen.`);
  return plan;
}

async function assertSlugFree(core: Core, app: AppRow, slugValue: string, planId?: string): Promise<void> {
  const other = await core.db.billing.findPlanBySlug(app.id, slugValue);
  if (other && other.id !== planId) throw fail("conflict", `Another plan of this app already has the slug "${slugValue}".`);
}

export async function createPlan(core: Core, app: AppRow, raw: unknown): Promise<PlanRow> {
  const input = parseInput(CreatePlanSchema, raw);
  await assertSlugFree(core, app, input.slug);
  const now = core.clock();
  const plan: PlanRow = { id: newId("plan"), appId: app.id, ...input, stripeProductId: null, archivedAt: null, createdAt: now, updatedAt: now };
  await core.db.billing.insertPlan(plan);
  return plan;
}

/**
 * Changes a plan. Stripe prices are immutable, so a new price, currency or interval leaves
 * the linked Stripe price alone: run sync-stripe to create a matching one. Existing
 * subscribers keep the plan (their subscriptions name the plan id in their metadata).
 */
export async function updatePlan(core: Core, app: AppRow, planRef: string, raw: unknown): Promise<PlanRow> {
  const input = parseInput(UpdatePlanSchema, raw);
  const plan = await requirePlan(core, app, planRef);
  if (input.slug !== undefined) await assertSlugFree(core, app, input.slug, plan.id);
  const defined = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as Partial<PlanRow>;
  const next: PlanRow = { ...plan, ...defined, updatedAt: core.clock() };
  await core.db.billing.updatePlan(next);
  return next;
}

/** Archived plans leave the public list and checkout; current subscribers keep them. */
export async function setPlanArchived(core: Core, app: AppRow, planRef: string, archived: boolean): Promise<PlanRow> {
  const plan = await requirePlan(core, app, planRef);
  const now = core.clock();
  const next: PlanRow = { ...plan, archivedAt: archived ? (plan.archivedAt ?? now) : null, updatedAt: now };
  await core.db.billing.updatePlan(next);
  return next;
}
