import { toIso } from "../clock.ts";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { currentTenant, requireOwner } from "./seats.ts";

/**
 * Members by join order. `active` is false for those past the owner's seat count (after a
 * downgrade): the earliest joined keep the family plan.
 */
export async function listMembers(core: Core, app: AppRow, ownerId: string) {
  const { limit } = await requireOwner(core, app, ownerId);
  const rows = await core.db.family.members(app.id, ownerId);
  return {
    members: rows.map((m, i) => ({ tenantId: m.tenantId, email: m.email, joinedAt: toIso(m.joinedAt)!, active: limit === null || i < limit })),
  };
}

export async function removeMember(core: Core, app: AppRow, ownerId: string, memberId: string) {
  await requireOwner(core, app, ownerId);
  if (!(await core.db.family.removeMember(app.id, ownerId, memberId))) throw fail("not_found", `No member ${memberId} in your family.`);
  await core.realtime?.tenantEvent(app.id, ownerId, "family", { change: "member_removed", memberTenantId: memberId });
  await core.realtime?.tenantEvent(app.id, memberId, "family", { change: "removed", parentTenantId: ownerId });
  return { ok: true, removedMemberTenantId: memberId };
}

export async function leaveFamily(core: Core, app: AppRow, tenantId: string) {
  const tenant = await currentTenant(core, app, tenantId);
  if (tenant.parentTenantId === null || !(await core.db.family.leave(app.id, tenantId))) {
    throw fail("forbidden", "You are not a member of a family, so there is nothing to leave.");
  }
  await core.realtime?.tenantEvent(app.id, tenantId, "family", { change: "left", parentTenantId: tenant.parentTenantId });
  await core.realtime?.tenantEvent(app.id, tenant.parentTenantId, "family", { change: "member_left", memberTenantId: tenantId });
  return { ok: true };
}
