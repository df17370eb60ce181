import * as v from "valibot";

/**
 * Per-tenant caps when the tenant's plan names none: a self-registered tenant cannot fill the
 * disk. `files` counts files, so empty ones (which move no byte count) are bounded too;
 * `recordBytes` bounds record data, which the record count alone leaves at 100,000 × 256 KiB.
 */
export const DEFAULT_QUOTAS = { records: 100_000, recordBytes: 1024 * 1024 * 1024, storageBytes: 1024 * 1024 * 1024, files: 10_000 } as const;

const cap = v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0)));

/**
 * `settings.quotas`: the app's default caps per tenant. A number caps, `null` removes the
 * default. The entitlements `records`, `record_bytes`, `storage_bytes` and `file_count` of a
 * tenant's plan override them.
 */
export const QuotasSchema = v.strictObject({
  records: v.optional(cap, DEFAULT_QUOTAS.records),
  recordBytes: v.optional(cap, DEFAULT_QUOTAS.recordBytes),
  storageBytes: v.optional(cap, DEFAULT_QUOTAS.storageBytes),
  files: v.optional(cap, DEFAULT_QUOTAS.files),
});
