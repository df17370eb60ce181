import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { MemberOrgRow } from "../db/org-types.ts";
import { newId } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { bodyObject } from "../invites/shape.ts";
import { orgChanged, type OrgActor } from "./events.ts";
import { requireOwnerRole, requirePermission } from "./roles.ts";
import { toPublicOrg } from "./view.ts";
import { cancelOrgStripeSubscription } from "../billing/stripe-sync.ts";
import { removingOrgData } from "./records.ts";

const OrgName = v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(200, "must be at most 200 characters"));
export const OrgBody = bodyObject({ name: OrgName });
export const TransferBody = bodyObject({ tenantId: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(100)) });

/** The organization as the tenant sees it; another app's, an unknown one and one the tenant is not in all read as 404. */
export async function requireMember(core: Core, app: AppRow, orgId: string, tenantId: string): Promise<MemberOrgRow> {
  const org = await core.db.orgs.asMember(app.id, orgId, tenantId);
  if (!org) throw fail("not_found", `No organization ${orgId} among yours.`);
  return org;
}

/** A new organization with the tenant as its owner. */
export async function createOrg(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, name: string) {
  const now = core.clock();
  const row = { id: newId("org"), appId: app.id, name, kind: "team" as const, createdAt: now, updatedAt: now };
  const cap = app.settings.orgs.maxOwnedPerTenant;
  if (!(await core.db.orgs.create(row, actor.tenantId, cap))) {
    throw fail("limit_reached", `You already own ${cap} organizations, the most this app allows: delete one or hand one over first.`);
  }
  await orgChanged(core, app, actor, "org.created", row.id, { name });
  return { org: toPublicOrg({ ...row, role: "owner" }) };
}

export async function listOrgs(core: Core, app: AppRow, tenantId: string) {
  return { orgs: (await core.db.orgs.forTenant(app.id, tenantId)).map(toPublicOrg) };
}

export async function getOrg(core: Core, app: AppRow, tenantId: string, orgId: string) {
  return { org: toPublicOrg(await requireMember(core, app, orgId, tenantId)) };
}

export async function renameOrg(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string, name: string) {
  const org = await requireMember(core, app, orgId, actor.tenantId);
  requirePermission(app, org, "org.update");
  const row = await core.db.orgs.rename(app.id, orgId, name, core.clock());
  if (!row) throw fail("not_found", `No organization ${orgId} among yours.`);
  await orgChanged(core, app, actor, "org.updated", orgId, { name });
  return { org: toPublicOrg({ ...row, role: org.role }) };
}

/** Deletes the organization with its members and invites; owners only. */
export async function deleteOrg(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string): Promise<void> {
  const org = await requireMember(core, app, orgId, actor.tenantId);
  requireOwnerRole(org, "delete an organization");
  await cancelOrgStripeSubscription(core, app, orgId);
  const removed = await removingOrgData(core, app, orgId, () => core.db.orgs.remove(app.id, orgId));
  if (!removed) throw fail("not_found", `No organization ${orgId} among yours.`);
  await orgChanged(core, app, actor, "org.deleted", orgId, { name: org.name });
}

/** An owner hands the organization to another member, who becomes owner; the caller stays on as admin. */
export async function transferOrg(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string, to: string) {
  const org = await requireMember(core, app, orgId, actor.tenantId);
  requireOwnerRole(org, "transfer an organization");
  const target = await core.db.orgs.member(app.id, orgId, to);
  if (!target) throw fail("not_found", `No member ${to} in this organization: invite them first.`);
  if (to === actor.tenantId) throw fail("conflict", "You already own this organization: name another member.");
  if ((await core.db.orgs.transfer(app.id, orgId, actor.tenantId, to)) !== "changed") throw fail("not_found", `No member ${to} in this organization.`);
  await orgChanged(core, app, actor, "org.ownership_transferred", orgId, { from: actor.tenantId, to }, { tenantId: to, email: target.email });
  return { org: toPublicOrg({ ...org, role: "admin" }) };
}

/** The operator's deletion (CLI) or the app's developer's (dashboard): no membership needed; the trail names who. */
export async function deleteOrgAsOperator(core: Core, app: AppRow, orgId: string, actor: OrgActor = { tenantId: null }): Promise<void> {
  const org = await core.db.orgs.byId(app.id, orgId);
  if (org) await cancelOrgStripeSubscription(core, app, orgId);
  if (!org || !(await removingOrgData(core, app, orgId, () => core.db.orgs.remove(app.id, orgId)))) throw fail("not_found", `No organization ${orgId} in app ${app.name}.`);
  await orgChanged(core, app, actor, "org.deleted", orgId, { name: org.name });
}
