import { toIso } from "../clock.ts";
import type { TenantRow } from "../db/types.ts";

/** The spec's Tenant object. */
export function toPublicTenant(t: TenantRow) {
  return { id: t.id, email: t.email, emailVerifiedAt: toIso(t.emailVerifiedAt), createdAt: toIso(t.createdAt)! };
}
