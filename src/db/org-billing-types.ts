// Rows of billing per organization (src/orgs/billing.ts), apart from the tenant billing types.
import type { SubscriptionRow, UsageRow } from "./types.ts";

/** An organization's subscription of one source, like a tenant's; `seats` is a provider subscription's paid quantity. */
export type OrgSubscriptionRow = Omit<SubscriptionRow, "tenantId"> & {
  orgId: string;
  /** null on gifts and trials: they grant the plan, not seats */
  seats: number | null;
};

export interface OrgProviderSubscriptionWrite {
  appId: string;
  orgId: string;
  planId: string;
  status: string;
  provider: "stripe" | "dev";
  providerSubscriptionId: string;
  currentPeriodEnd: number | null;
  cancelAtPeriodEnd: boolean;
  seats: number;
  now: number;
}

export interface OrgUsageIncrement {
  appId: string;
  orgId: string;
  featureKey: string;
  period: string;
  periodStart: number;
  by: number;
  limit: number | null;
}

export type { UsageRow };
