import * as v from "valibot";

/** Per-tenant caps when the tenant's plan names none: a self-registered tenant cannot fill the disk. */
export const DEFAULT_QUOTAS = { records: 100_000, storageBytes: 1024 * 1024 * 1024 } as const;

const cap = v.nullable(v.pipe(v.number(), v.integer(), v.minValue(0)));

/**
 * `settings.quotas`: the app's default caps per tenant. A number caps, `null` removes the
 * default. The entitlements `records` and `storage_bytes` of a tenant's plan override them.
 */
export const QuotasSchema = v.strictObject({
  records: v.optional(cap, DEFAULT_QUOTAS.records),
  storageBytes: v.optional(cap, DEFAULT_QUOTAS.storageBytes),
});
