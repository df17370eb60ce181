import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { OrgRow } from "../db/org-types.ts";
import { toIso } from "../clock.ts";
import { fail } from "../errors.ts";
import { whole } from "../admin/tenant-routes.ts";
import { memberCursor, readMemberCursor, toPublicMember, toPublicOrg } from "./view.ts";
import type { MembersQuery } from "./members.ts";
import { orgSeats, toPublicOrgInvite } from "./invites.ts";
import { deleteOrgAsOperator } from "./orgs.ts";
import type { OrgActor } from "./events.ts";

export const AdminOrgsQuery = v.object({ limit: v.optional(whole(1, 1000, "limit"), "50"), offset: v.optional(whole(0, Number.MAX_SAFE_INTEGER, "offset"), "0") });

/** An organization as its app's developer (and the CLI) sees it: no caller's role. */
export const toAdminOrg = (o: OrgRow) => ({ id: o.id, name: o.name, kind: o.kind, createdAt: toIso(o.createdAt)!, updatedAt: toIso(o.updatedAt)! });

/** The app's organizations, newest first, with their member counts. */
export async function listAppOrgs(core: Core, app: AppRow, q: v.InferOutput<typeof AdminOrgsQuery>) {
  const { orgs, total } = await core.db.orgs.list(app.id, q.limit, q.offset);
  return { orgs: orgs.map((o) => ({ ...toAdminOrg(o), members: o.members })), total, limit: q.limit, offset: q.offset };
}

/** One organization of the app with a page of its members (join order, `after` = the previous `next`). */
export async function showAppOrg(core: Core, app: AppRow, orgId: string, q: v.InferOutput<typeof MembersQuery>) {
  const org = await core.db.orgs.byId(app.id, orgId);
  if (!org) throw fail("not_found", `No organization ${orgId} in this app.`);
  const rows = await core.db.orgs.members(app.id, org.id, q.limit + 1, q.after === undefined ? undefined : readMemberCursor(q.after));
  const page = rows.slice(0, q.limit);
  return { org: toAdminOrg(org), members: page.map(toPublicMember), next: rows.length > q.limit ? memberCursor(page[page.length - 1]!) : null };
}

/** The developer's page of one organization: `showAppOrg`, and with the first page its invites and seats. */
export async function adminOrgPage(core: Core, app: AppRow, orgId: string, q: v.InferOutput<typeof MembersQuery>) {
  const page = await showAppOrg(core, app, orgId, q);
  if (q.after !== undefined) return page;
  const now = core.clock();
  const [invites, seats] = await Promise.all([core.db.orgs.listInvites(app.id, orgId), orgSeats(core, app, orgId)]);
  return { ...page, invites: invites.map((r) => toPublicOrgInvite(r, now)), seats };
}

/** The organizations a tenant of the app belongs to, with its role in each: what the tenant's own list shows. */
export async function tenantOrgs(core: Core, app: AppRow, tenantId: string) {
  return { orgs: (await core.db.orgs.forTenant(app.id, tenantId)).map(toPublicOrg) };
}

/** The developer deletes an organization of their app, as the CLI does: audited with the developer as the actor. */
export const deleteAppOrg = (core: Core, app: AppRow, orgId: string, actor: OrgActor) => deleteOrgAsOperator(core, app, orgId, actor);
