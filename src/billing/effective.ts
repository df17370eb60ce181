import type { Core } from "../core.ts";
import type { AppRow } from "../db/apps.ts";

/** The spec's Subscription object. */
export interface Subscription {
  planId: string;
  planName: string;
  planSlug: string;
  status: "active" | "past_due" | "canceled" | "trialing" | "unpaid";
  currentPeriodEnd: string | null;
  cancelAtPeriodEnd: boolean;
  source?: "billing_provider" | "gift" | "trial" | "family";
  giftExpiresAt?: string | null;
  trialUntil?: string | null;
  familyOwnerEmail?: string | null;
}

export type Entitlements = Record<string, boolean | number>;

/**
 * The tenant's one effective subscription by PRODUCT.md's precedence (paid, gift, trial,
 * family), or null. Other areas (introspection, files quota, family) read it from here.
 */
export async function effectiveSubscription(core: Core, app: AppRow, tenantId: string): Promise<Subscription | null> {
  void core;
  void app;
  void tenantId;
  return null;
}

/** The effective plan's entitlements over the app's default (free) entitlements. */
export async function effectiveEntitlements(core: Core, app: AppRow, tenantId: string): Promise<Entitlements> {
  void core;
  void tenantId;
  return { ...app.settings.billing.defaultEntitlements };
}
