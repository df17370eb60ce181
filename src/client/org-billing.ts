import type { InferOutput } from "valibot";
import type { Core } from "./core.ts";
import type { Usage } from "./types.ts";
import type { UsagePeriod } from "./billing.ts";
// Type-only, like types.ts: the server's own response schema.
import type * as B from "../openapi/org-billing-operations.ts";

export type OrgBilling = InferOutput<typeof B.OrgBillingReply>;

const tenant = { auth: "tenant" } as const;

/** Billing of one organization (docs/organizations.md#billing): `tenantd.orgs.billing…`. */
export function orgBillingApi(core: Core) {
  const at = (orgId: string, rest = "") => `/api/v1/orgs/${encodeURIComponent(orgId)}/billing${rest}`;
  const feature = (orgId: string, key: string) => at(orgId, `/usage/${encodeURIComponent(key)}`);
  return {
    /** The subscription (with its paid `seats`), entitlements, seats and this period's counters; any member. */
    get: (orgId: string): Promise<OrgBilling> => core.request("GET", at(orgId), tenant),
    /** Resolves to the checkout URL; `seats` defaults to the seats in use (permission billing.manage). */
    checkout: async (orgId: string, input: { planId: string; successUrl: string; cancelUrl: string; seats?: number; currency?: string }): Promise<string> =>
      (await core.request<{ url: string }>("POST", at(orgId, "/checkout"), { ...tenant, body: input })).url,
    /** Resolves to the organization's billing portal URL (permission billing.manage). */
    portal: async (orgId: string, input: { returnUrl: string }): Promise<string> => (await core.request<{ url: string }>("POST", at(orgId, "/portal"), { ...tenant, body: input })).url,
    /** Sets the paid seats (the subscription's quantity); never below the seats in use. */
    setSeats: (orgId: string, seats: number): Promise<OrgBilling> => core.request("PUT", at(orgId, "/seats"), { ...tenant, body: { seats } }),
    usage: (orgId: string, featureKey: string, opts: { period?: UsagePeriod } = {}): Promise<Usage> => core.request("GET", feature(orgId, featureKey), { ...tenant, query: opts }),
    /** Adds `by` (default 1) to the organization's counter; `limit_reached` (402) past its limit, counting nothing. */
    increment: (orgId: string, featureKey: string, opts: { by?: number; period?: UsagePeriod } = {}): Promise<Usage> =>
      core.request("POST", `${feature(orgId, featureKey)}/increment`, { ...tenant, body: opts }),
  };
}
