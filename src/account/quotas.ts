import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { effectiveEntitlements } from "../billing/effective.ts";

/** Entitlement keys that override the app's default quotas (`true`: no cap, `false`: 0). */
export const RECORDS_ENTITLEMENT = "records";
export const RECORD_BYTES_ENTITLEMENT = "record_bytes";
export const STORAGE_ENTITLEMENT = "storage_bytes";
export const FILE_COUNT_ENTITLEMENT = "file_count";

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
 * Refuses a new file past the tenant's cap on its number of files: its plan's `file_count`,
 * else `settings.quotas.files`. Checked before each upload, like the record cap: concurrent
 * uploads may pass it by a few.
 */
export async function requireFileCountQuota(core: Core, app: AppRow, tenantId: string): Promise<void> {
  const entitlements = await effectiveEntitlements(core, app, tenantId);
  const cap = capOf(entitlements[FILE_COUNT_ENTITLEMENT], app.settings.quotas.files);
  if (cap !== null && (await core.db.files.count(app.id, tenantId)) >= cap) {
    throw fail("limit_reached", `You have ${cap} files, the most your plan allows. Delete files or upgrade the plan.`);
  }
}

/**
 * The error of a create past the tenant's record cap. The store checks the count in the
 * insert itself (QuotaReached); concurrent creates may pass the cap by a few: it bounds what
 * one tenant can store, it is not a billing meter.
 */
export const recordLimitReached = (cap: number) =>
  fail("limit_reached", `You have ${cap} records, the most your plan allows. Delete records or upgrade the plan.`);

/** The tenant's cap on records: its plan's `records`, else `settings.quotas.records`; null is none. */
export async function recordCap(core: Core, app: AppRow, tenantId: string): Promise<number | null> {
  return (await recordCaps(core, app, tenantId)).records;
}

/** The tenant's caps on records and on the bytes of their data, from one read of its entitlements. */
export interface RecordCaps {
  /** its plan's `records`, else `settings.quotas.records`; null is none */
  records: number | null;
  /** its plan's `record_bytes`, else `settings.quotas.recordBytes`; null is none */
  bytes: number | null;
}

/** `orgId`: an organization's records (tenantId is then its data owner id): the organization's plan sets the caps. */
export async function recordCaps(core: Core, app: AppRow, tenantId: string, orgId?: string): Promise<RecordCaps> {
  // Imported when first needed: orgs/billing.ts reaches back to the data area (an import cycle at load time).
  const entitlements = orgId === undefined ? await effectiveEntitlements(core, app, tenantId) : await (await import("../orgs/billing.ts")).orgEntitlements(core, app, orgId);
  return {
    records: capOf(entitlements[RECORDS_ENTITLEMENT], app.settings.quotas.records),
    bytes: capOf(entitlements[RECORD_BYTES_ENTITLEMENT], app.settings.quotas.recordBytes),
  };
}

/**
 * The error of a write that would take the tenant's record data past its byte cap. Unlike
 * the record count, the store checks it so that concurrent writers cannot pass it together.
 */
export const recordBytesReached = (cap: number) =>
  fail("limit_reached", `This write would take your records past ${cap} bytes of data, the most your plan allows. Delete records, make them smaller or upgrade the plan.`);
