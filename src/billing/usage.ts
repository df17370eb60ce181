import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { andThen, type Awaitable } from "../awaitable.ts";
import { effectiveEntitlement, effectiveEntitlements, type Entitlements } from "./effective.ts";
import { periodStart, type UsagePeriod } from "./periods.ts";
import { MAX_USAGE_KEYS } from "../db/shared.ts";

/** Feature keys: 1-64 letters, digits, `_`, `.`, `:` or `-` (the same shape as entitlement keys). */
export const FEATURE_KEY = /^[A-Za-z0-9_.:-]{1,64}$/;
/** Largest single increment; a bigger `by` is a bug in the caller, not a usage. */
export const MAX_INCREMENT = 1_000_000;

const period = v.picklist(["monthly", "daily"], "must be monthly or daily");
export const FeatureKeyParam = v.pipe(v.string(), v.regex(FEATURE_KEY, "must be 1-64 letters, digits, _ . : or -"));
export const UsageQuery = v.object({ period: v.optional(period, "monthly") });
export const IncrementBody = v.object({
  by: v.optional(v.pipe(v.number(), v.integer("must be a whole number"), v.minValue(1, "must be at least 1"), v.maxValue(MAX_INCREMENT, `must be at most ${MAX_INCREMENT}`)), 1),
  period: v.optional(period, "monthly"),
});

export interface UsageCounter {
  count: number;
  period: UsagePeriod;
  limit: number | null;
}

/** The entitlement as a limit: a number is the limit, `false` is 0, `true` or absent is none (null). */
export function limitFor(entitlements: Entitlements, featureKey: string): number | null {
  return asLimit(Object.hasOwn(entitlements, featureKey) ? entitlements[featureKey] : undefined);
}

export function asLimit(value: Entitlements[string] | undefined): number | null {
  if (typeof value === "number") return value;
  return value === false ? 0 : null;
}

export async function readUsage(core: Core, app: AppRow, tenantId: string, featureKey: string, p: UsagePeriod): Promise<UsageCounter> {
  const limit = limitFor(await effectiveEntitlements(core, app, tenantId), featureKey);
  const count = await core.db.billing.usage(app.id, tenantId, featureKey, p, periodStart(p, core.clock()));
  return { count, period: p, limit };
}

/**
 * Adds `by` in the current UTC period; past the limit nothing changes and it is 402
 * `limit_reached`. The limit is read without a promise when the entitlements are remembered
 * (src/awaitable.ts): metering sits on the hot path of the apps that use it. The write
 * settles once committed (on SQLite, with the turn's other writes: write-batch.ts).
 */
export function incrementUsage(core: Core, app: AppRow, tenantId: string, featureKey: string, input: { by: number; period: UsagePeriod }): Awaitable<UsageCounter> {
  return andThen(effectiveEntitlement(core, app, tenantId, featureKey), (value) => {
    const limit = asLimit(value);
    const start = periodStart(input.period, core.clock());
    return andThen(core.db.billing.incrementUsage({ appId: app.id, tenantId, featureKey, period: input.period, periodStart: start, by: input.by, limit }), (count) =>
      count === undefined ? refuse(core, app, tenantId, featureKey, input, start, limit) : { count, period: input.period, limit },
    );
  });
}

async function refuse(core: Core, app: AppRow, tenantId: string, featureKey: string, input: { by: number; period: UsagePeriod }, start: number, limit: number | null): Promise<never> {
  throw usageRefusal(await core.db.billing.usage(app.id, tenantId, featureKey, input.period, start), "a tenant", featureKey, input, limit);
}

/** Why an increment was refused, given the counter's count now; `owner` is "a tenant" or "an organization". */
export function usageRefusal(current: number, owner: string, featureKey: string, input: { by: number; period: UsagePeriod }, limit: number | null) {
  const when = input.period === "monthly" ? "month" : "day";
  // No counter and room under the limit: the owner has as many counters as it may.
  if (current === 0 && (limit === null || input.by <= limit)) {
    return fail("limit_reached", `You have ${MAX_USAGE_KEYS} usage counters this ${when} (UTC), the most ${owner} may have: ${featureKey} is not counted. Use fewer feature keys.`);
  }
  return fail("limit_reached", `Usage limit reached for ${featureKey}: ${current} of ${limit} used this ${when} (UTC); adding ${input.by} would pass it.`);
}

/** Every counter of the current month and day, with its limit (developer view). */
export async function usageOverview(core: Core, app: AppRow, tenantId: string) {
  const now = core.clock();
  const entitlements = await effectiveEntitlements(core, app, tenantId);
  const rows = await core.db.billing.usageList(app.id, tenantId, periodStart("monthly", now), periodStart("daily", now));
  return rows.map((r) => ({ featureKey: r.featureKey, period: r.period, count: r.count, limit: limitFor(entitlements, r.featureKey) }));
}
