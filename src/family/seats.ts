import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { effectiveEntitlements } from "../billing/effective.ts";
import { entitlementLimit } from "../invites/shape.ts";

/** `limit` null is unlimited; `used` counts members, `pending` unused invites that have not expired. */
export interface Seats {
  limit: number | null;
  used: number;
  pending: number;
  remaining: number | null;
}

/**
 * The owner's seats: the entitlement `family_seats` of the owner's effective plan (a number;
 * `true` is unlimited). Owners are never members, so this is the owner's own plan.
 */
export async function familySeatLimit(core: Core, app: AppRow, ownerId: string): Promise<number | null> {
  return entitlementLimit((await effectiveEntitlements(core, app, ownerId)).family_seats, 0);
}

export async function seatsOf(core: Core, app: AppRow, ownerId: string, limit: number | null): Promise<Seats> {
  const { members, pending } = await core.db.family.seatCounts(app.id, ownerId, core.clock());
  return { limit, used: members, pending, remaining: limit === null ? null : Math.max(0, limit - members - pending) };
}

/** The signed-in tenant's row, read fresh: a token's `pid` claim may predate a leave or removal. */
export async function currentTenant(core: Core, app: AppRow, tenantId: string): Promise<TenantRow> {
  const tenant = await core.db.tenants.findById(app.id, tenantId);
  if (!tenant) throw fail("session_ended", "This account no longer exists.");
  return tenant;
}

/**
 * An owner is a tenant who is not a member and whose plan grants seats; one whose plan has
 * lapsed stays an owner while it still has members or pending invites, so it can list and
 * remove them.
 */
export async function requireOwner(core: Core, app: AppRow, tenantId: string): Promise<{ tenant: TenantRow; limit: number | null; seats: Seats }> {
  const tenant = await currentTenant(core, app, tenantId);
  if (tenant.parentTenantId !== null) {
    throw fail("forbidden", "Family members cannot manage a family: only the owner can. Leave the family first (POST /api/v1/tenants/me/family/leave).");
  }
  const limit = await familySeatLimit(core, app, tenantId);
  const seats = await seatsOf(core, app, tenantId, limit);
  if (limit === 0 && seats.used === 0 && seats.pending === 0) {
    throw fail("forbidden", "Only a family owner can do this: your plan grants no family seats (entitlement family_seats).");
  }
  return { tenant, limit, seats };
}
