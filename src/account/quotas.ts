import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { effectiveEntitlements } from "../billing/effective.ts";

/** Entitlement keys that override the app's default quotas (`true`: no cap, `false`: 0). */
export const RECORDS_ENTITLEMENT = "records";
export const STORAGE_ENTITLEMENT = "storage_bytes";

function capOf(value: boolean | number | undefined, fallback: number | null): number | null {
  if (value === true) return null;
  if (value === false) return 0;
  return typeof value === "number" ? Math.floor(value) : fallback;
}

/** The tenant's cap on stored file bytes: its plan's `storage_bytes`, else `settings.quotas.storageBytes`; null is none. */
export async function storageQuota(core: Core, app: AppRow, tenantId: string): Promise<number | null> {
  const entitlements = await effectiveEntitlements(core, app, tenantId);
  return capOf(entitlements[STORAGE_ENTITLEMENT], app.settings.quotas.storageBytes);
}

/**
 * Refuses a new record past the tenant's cap: its plan's `records`, else
 * `settings.quotas.records`. Checked before each create, so concurrent creates may pass the
 * cap by a few; it bounds what one tenant can store, it is not a billing meter.
 */
export async function requireRecordQuota(core: Core, app: AppRow, tenantId: string): Promise<void> {
  const cap = await recordCap(core, app, tenantId);
  if (cap !== null && (await core.db.stats.tenantRecords(app.id, tenantId)) >= cap) {
    throw fail("limit_reached", `You have ${cap} records, the most your plan allows. Delete records or upgrade the plan.`);
  }
}

/** Whether the tenant holds as many records as its cap allows (a create would be refused). */
export async function recordQuotaReached(core: Core, app: AppRow, tenantId: string): Promise<boolean> {
  const cap = await recordCap(core, app, tenantId);
  return cap !== null && (await core.db.stats.tenantRecords(app.id, tenantId)) >= cap;
}

/** The tenant's record cap: its plan's `records`, else `settings.quotas.records`; null is none. */
export async function recordCap(core: Core, app: AppRow, tenantId: string): Promise<number | null> {
  const entitlements = await effectiveEntitlements(core, app, tenantId);
  return capOf(entitlements[RECORDS_ENTITLEMENT], app.settings.quotas.records);
}
