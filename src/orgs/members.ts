import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { MemberChange } from "../db/org-types.ts";
import { fail } from "../errors.ts";
import { whole } from "../admin/tenant-routes.ts";
import { bodyObject } from "../invites/shape.ts";
import { orgChanged, type OrgActor } from "./events.ts";
import { requireMember } from "./orgs.ts";
import { requireKnownRole, requireOutranks, requirePermission } from "./roles.ts";
import { toPublicMember } from "./view.ts";
import { showAppOrg } from "./admin.ts";
import { syncAutoSeats } from "./billing-seats.ts";

export const RoleBody = bodyObject({ role: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(32, "must be at most 32 characters")) });
export const MembersQuery = v.object({ limit: v.optional(whole(1, 200, "limit"), "50"), after: v.optional(v.pipe(v.string("after must appear once"), v.maxLength(400))) });

const LAST_OWNER = "An organization keeps at least one owner: make another member owner (or transfer ownership) first, or delete the organization.";

function requireChanged(outcome: MemberChange, who: string): void {
  if (outcome === "not_found") throw fail("not_found", `No member ${who} in this organization.`);
  if (outcome === "last_owner") throw fail("conflict", LAST_OWNER);
  if (outcome === "stale") throw fail("conflict", "A role changed while this was being decided: read the members again and retry.");
}

/** Members in join order, `limit` a page; `next` is the cursor of the page after, null on the last. */
export async function listMembers(core: Core, app: AppRow, tenantId: string, orgId: string, query: v.InferOutput<typeof MembersQuery>) {
  await requireMember(core, app, orgId, tenantId);
  const { members, next } = await showAppOrg(core, app, orgId, query);
  return { members, next };
}

export async function changeRole(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string, memberId: string, role: string) {
  const org = await requireMember(core, app, orgId, actor.tenantId);
  requirePermission(app, org, "members.role");
  requireKnownRole(app, role);
  const target = await core.db.orgs.member(app.id, orgId, memberId);
  if (!target) throw fail("not_found", `No member ${memberId} in this organization.`);
  requireOutranks(app, org, target.role, "change the role of");
  requireOutranks(app, org, role, "give the role");
  if (target.role !== role) {
    const checks = [{ tenantId: actor.tenantId, role: org.role }, { tenantId: memberId, role: target.role }];
    requireChanged(await core.db.orgs.setRole(app.id, orgId, memberId, role, checks), memberId);
    await orgChanged(core, app, actor, "org.member.role_changed", orgId, { from: target.role, role }, { tenantId: memberId, email: target.email });
  }
  return { member: toPublicMember({ ...target, role }) };
}

/** Removes a member; removing oneself is leaving. */
export async function removeMember(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string, memberId: string): Promise<void> {
  if (memberId === actor.tenantId) return leaveOrg(core, app, actor, orgId);
  const org = await requireMember(core, app, orgId, actor.tenantId);
  requirePermission(app, org, "members.remove");
  const target = await core.db.orgs.member(app.id, orgId, memberId);
  if (!target) throw fail("not_found", `No member ${memberId} in this organization.`);
  requireOutranks(app, org, target.role, "remove");
  requireChanged(await core.db.orgs.removeMember(app.id, orgId, memberId, [{ tenantId: actor.tenantId, role: org.role }, { tenantId: memberId, role: target.role }]), memberId);
  await orgChanged(core, app, actor, "org.member.removed", orgId, { role: target.role, reason: "removed" }, { tenantId: memberId, email: target.email });
  await syncAutoSeats(core, app, orgId);
}

export async function leaveOrg(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string): Promise<void> {
  const org = await requireMember(core, app, orgId, actor.tenantId);
  const outcome = await core.db.orgs.removeMember(app.id, orgId, actor.tenantId);
  if (outcome === "last_owner") throw fail("conflict", `You are the last owner. ${LAST_OWNER}`);
  requireChanged(outcome, actor.tenantId);
  const me = await core.db.tenants.findById(app.id, actor.tenantId);
  await orgChanged(core, app, actor, "org.member.removed", orgId, { role: org.role, reason: "left" }, { tenantId: actor.tenantId, email: me?.email ?? null });
  await syncAutoSeats(core, app, orgId);
}
