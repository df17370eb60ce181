import type { Core } from "./core.ts";
import type { Entitlements, Plan, Subscription, Usage, WriteOptions } from "./types.ts";
import { writeOptions } from "./data.ts";

export type UsagePeriod = "monthly" | "daily";

/** Plans, checkout and portal, the effective subscription and entitlements, usage counters. */
export function billingApi(core: Core) {
  const { request } = core;
  const tenant = { auth: "tenant" } as const;
  const feature = (key: string) => `/api/v1/billing/usage/${encodeURIComponent(key)}`;
  return {
    plans: async (): Promise<Plan[]> => (await request<{ plans: Plan[] }>("GET", "/api/v1/billing/plans", { auth: "key" })).plans,
    /** Resolves to the checkout URL to send the browser to. */
    checkout: async (input: { planId: string; successUrl: string; cancelUrl: string; currency?: string }): Promise<string> =>
      (await request<{ url: string }>("POST", "/api/v1/billing/checkout", { ...tenant, body: input })).url,
    /** Resolves to the billing portal URL. */
    portal: async (input: { returnUrl: string }): Promise<string> => (await request<{ url: string }>("POST", "/api/v1/billing/portal", { ...tenant, body: input })).url,
    subscription: async (): Promise<Subscription | null> => (await request<{ subscription: Subscription | null }>("GET", "/api/v1/billing/subscription", tenant)).subscription,
    entitlements: async (): Promise<Entitlements> => (await request<{ entitlements: Entitlements }>("GET", "/api/v1/billing/entitlements", tenant)).entitlements,
    usage: (featureKey: string, opts: { period?: UsagePeriod } = {}): Promise<Usage> => request("GET", feature(featureKey), { ...tenant, query: opts }),
    /** Adds `by` (default 1); refused with `limit_reached` (402) past the limit, counting nothing. */
    increment: (featureKey: string, { idempotencyKey, ...opts }: { by?: number; period?: UsagePeriod } & WriteOptions = {}): Promise<Usage> =>
      request("POST", `${feature(featureKey)}/increment`, { ...writeOptions({ idempotencyKey }), body: opts }),
  };
}
