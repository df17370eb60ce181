import type { Core } from "../core.ts";
import { setFamilyOwnerResolver } from "../billing/effective.ts";
import { familySeatLimit } from "./seats.ts";

/**
 * Tells billing who pays for a member: its owner, while the owner's plan still grants a seat
 * for it. After a downgrade below the member count, the earliest joined keep their seats;
 * when the owner's plan grants none (lapsed, or the owner is gone), nobody does.
 */
export function installFamily(core: Core): void {
  setFamilyOwnerResolver(core, async (app, tenantId) => {
    const membership = await core.db.family.membership(app.id, tenantId);
    if (!membership) return null;
    const limit = await familySeatLimit(core, app, membership.ownerTenantId);
    if (limit !== null && membership.rank >= limit) return null;
    return { ownerTenantId: membership.ownerTenantId, ownerEmail: membership.ownerEmail };
  });
}
