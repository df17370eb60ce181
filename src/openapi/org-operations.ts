import * as v from "valibot";
import type { Operation } from "./operations.ts";
import { OrgBody, TransferBody } from "../orgs/orgs.ts";
import { MembersQuery, RoleBody } from "../orgs/members.ts";
import { NoBody } from "../family/routes.ts";
import { AcceptBody, OrgInviteBody } from "../orgs/invites.ts";
import { AdminOrgsQuery } from "../orgs/admin.ts";

const obj = v.strictObject;
const iso = v.pipe(v.string(), v.isoTimestamp());
const base = "/api/v1/orgs";
const org = `${base}/:orgId`;

export const Org = obj({ id: v.string(), name: v.string(), kind: v.picklist(["team", "family"]), role: v.string(), createdAt: iso, updatedAt: iso });
export const OrgReply = obj({ org: Org });
export const OrgList = obj({ orgs: v.array(Org) });
export const OrgMember = obj({ tenantId: v.string(), email: v.string(), role: v.string(), joinedAt: iso });
export const OrgMemberReply = obj({ member: OrgMember });
export const OrgMemberPage = obj({ members: v.array(OrgMember), next: v.nullable(v.string()) });

export const AdminOrg = obj({ id: v.string(), name: v.string(), kind: v.picklist(["team", "family"]), createdAt: iso, updatedAt: iso });
export const AdminOrgList = obj({ orgs: v.array(obj({ ...AdminOrg.entries, members: v.number() })), total: v.number(), limit: v.number(), offset: v.number() });
export const OrgSeats = obj({ limit: v.nullable(v.number()), used: v.number(), pending: v.number(), remaining: v.nullable(v.number()) });
export const OrgInvite = obj({
  id: v.string(),
  kind: v.picklist(["email", "link"]),
  email: v.nullable(v.string()),
  role: v.string(),
  status: v.picklist(["pending", "used", "expired"]),
  uses: v.number(),
  createdAt: iso,
  expiresAt: iso,
  usedAt: v.nullable(iso),
  usedByTenantId: v.nullable(v.string()),
});
export const OrgInviteCreated = obj({ invite: obj({ ...OrgInvite.entries, token: v.string(), url: v.nullable(v.string()) }), seats: OrgSeats });
export const OrgInviteList = obj({ invites: v.array(OrgInvite), seats: OrgSeats });
/** With the first page (no `after`): the invites and seats too. */
export const AdminOrgDetail = obj({ org: AdminOrg, members: v.array(OrgMember), next: v.nullable(v.string()), invites: v.optional(v.array(OrgInvite)), seats: v.optional(OrgSeats) });

const NOTE_404 = "An organization the tenant is not a member of (or of another app) answers 404, like one that does not exist; a member whose role does not allow the action gets 403.";

/** Organizations (docs/organizations.md): every route is the signed-in tenant's. */
export const ORG_OPERATIONS: Operation[] = [
  { method: "POST", path: base, tag: "orgs", summary: "Create an organization (the caller is its owner)", security: "tenant", body: OrgBody, responses: { 201: OrgReply }, errors: ["limit_reached"],
    description: "402 `limit_reached` when the caller already owns `settings.orgs.maxOwnedPerTenant` organizations (default 100)." },
  { method: "GET", path: base, tag: "orgs", summary: "The caller's organizations, with its role in each", security: "tenant", responses: { 200: OrgList } },
  { method: "GET", path: org, tag: "orgs", summary: "One of the caller's organizations", security: "tenant", responses: { 200: OrgReply }, errors: ["not_found"], description: NOTE_404 },
  { method: "PATCH", path: org, tag: "orgs", summary: "Rename (permission org.update)", security: "tenant", body: OrgBody, responses: { 200: OrgReply }, errors: ["not_found", "forbidden"], description: NOTE_404 },
  { method: "DELETE", path: org, tag: "orgs", summary: "Delete the organization with its members and invites (owners only)", security: "tenant", responses: { 204: "empty" }, errors: ["not_found", "forbidden"], description: NOTE_404 },
  { method: "POST", path: `${org}/transfer`, tag: "orgs", summary: "Hand the organization to another member (owners only; the caller becomes admin)", security: "tenant", body: TransferBody, responses: { 200: OrgReply }, errors: ["not_found", "forbidden", "conflict"], description: NOTE_404 },
  { method: "GET", path: `${org}/members`, tag: "orgs", summary: "Members in join order, a page at a time (`after` = the previous page's `next`)", security: "tenant", query: MembersQuery, responses: { 200: OrgMemberPage }, errors: ["not_found", "invalid_cursor"], description: NOTE_404 },
  { method: "PATCH", path: `${org}/members/:tenantId`, tag: "orgs", summary: "Change a member's role (permission members.role)", security: "tenant", body: RoleBody, responses: { 200: OrgMemberReply }, errors: ["not_found", "forbidden", "conflict"],
    description: `${NOTE_404} Only owners touch owners or hand out owner; other roles may act only on, and hand out, roles whose permissions are all their own. Demoting the last owner is 409, as is a change decided on a role that changed meanwhile (read the members again).` },
  { method: "DELETE", path: `${org}/members/:tenantId`, tag: "orgs", summary: "Remove a member (permission members.remove); one's own id leaves", security: "tenant", responses: { 204: "empty" }, errors: ["not_found", "forbidden", "conflict"], description: `${NOTE_404} The last owner cannot leave (409).` },
  { method: "POST", path: `${org}/invites`, tag: "orgs", summary: "Invite by email (single use, that address only) or, without email, by link (permission members.invite)", security: "tenant", body: OrgInviteBody, responses: { 201: OrgInviteCreated },
    errors: ["not_found", "forbidden", "seats_full"], description: `${NOTE_404} The plaintext token is in this reply only. An email invite holds a seat until used or expired; a link takes a free seat at each use. With \`settings.email.sendEmail\` the invitee gets an email (en, es, nl) linking to \`settings.orgs.inviteUrl\`.` },
  { method: "GET", path: `${org}/invites`, tag: "orgs", summary: "The organization's invites and seats (permission members.invite)", security: "tenant", responses: { 200: OrgInviteList }, errors: ["not_found", "forbidden"], description: NOTE_404 },
  { method: "DELETE", path: `${org}/invites/:inviteId`, tag: "orgs", summary: "Revoke an invite (permission members.invite)", security: "tenant", responses: { 204: "empty" }, errors: ["not_found", "forbidden", "conflict"], description: NOTE_404 },
  { method: "POST", path: `${base}/invites/accept`, tag: "orgs", summary: "Join an organization with an invite token", security: "tenant", body: AcceptBody, responses: { 200: OrgReply }, errors: ["invalid_token", "forbidden", "seats_full", "conflict"],
    description: "A new person signs up with the token as `inviteToken` (POST /auth/signup) instead. An email invite is accepted only by the tenant with that email (403 otherwise)." },
  { method: "GET", path: "/api/v1/admin/apps/:appId/orgs", tag: "admin", summary: "The app's organizations, newest first, with member counts", security: "developer", query: AdminOrgsQuery, responses: { 200: AdminOrgList } },
  { method: "GET", path: "/api/v1/admin/apps/:appId/orgs/:orgId", tag: "admin", summary: "One organization of the app and a page of its members (join order; `after` = the previous `next`); the first page also has its invites and seats", security: "developer", query: MembersQuery, responses: { 200: AdminOrgDetail },
    errors: ["invalid_cursor"] },
  { method: "DELETE", path: "/api/v1/admin/apps/:appId/orgs/:orgId", tag: "admin", summary: "Delete an organization of the app with its members and invites (the dashboard's and `tenantd org delete`'s deletion)", security: "developer", responses: { 204: "empty" }, errors: ["not_found"],
    description: "Audited as `org.deleted` with the developer as the actor; the `org.deleted` webhook fires." },
  { method: "GET", path: "/api/v1/admin/apps/:appId/tenants/:tenantId/orgs", tag: "admin", summary: "The organizations a tenant belongs to, with its role in each (what the tenant's own GET /orgs answers)", security: "developer", responses: { 200: OrgList }, errors: ["not_found"] },
  { method: "POST", path: `${org}/leave`, tag: "orgs", summary: "Leave the organization", security: "tenant", body: NoBody, responses: { 204: "empty" }, errors: ["not_found", "conflict"], description: "The last owner cannot leave (409): make another member owner first, or delete the organization." },
];

const orgEvent = (summary: string) => ({ summary: `${summary} \`payload.orgId\` names the organization; \`tenantId\` and \`email\` the member concerned (docs/organizations.md).`, payload: v.looseObject({ orgId: v.string() }) });

/** Organization changes as webhook events; each is also the audit action of the same name. */
export const ORG_WEBHOOK_EVENTS = {
  "org.created": orgEvent("An organization was created (`name`)."),
  "org.updated": orgEvent("An organization was renamed (`name`)."),
  "org.deleted": orgEvent("An organization was deleted (`name`, or `reason` when its last member's account went)."),
  "org.ownership_transferred": orgEvent("An owner handed the organization over (`from`, `to`, `reason?`)."),
  "org.member.added": orgEvent("A tenant joined (`role`, `via`: `accept` or `signup`)."),
  "org.member.removed": orgEvent("A member was removed or left (`role`, `reason`: `removed` or `left`)."),
  "org.member.role_changed": orgEvent("A member's role changed (`from`, `role`)."),
  "org.invite.created": orgEvent("An invite was created (`inviteId`, `kind`, `role`, `email?`)."),
  "org.invite.revoked": orgEvent("An invite was revoked (`inviteId`)."),
  "org.subscription.updated": orgEvent("The organization's subscription changed: a Stripe or development subscription (`source: billing_provider`, `provider`, `planId`, `status`, `seats`, `cancelAtPeriodEnd`), or a gift or trial granted or revoked by the developer (`source`, `change`, `planId?`, `expiresAt?`)."),
};

const ORG_RECORDS_NOTE =
  "The organization's records, as a tenant's own (the same bodies, queries, replies and errors), in a collection the app declares `org` (`settings.collections.<name>.org`). Reading needs `records.read`; writing `records.write`, or only membership where the collection says `{ \"write\": \"members\" }` (the batch always needs `records.write`). " +
  `${NOTE_404} A tenant route on an organization collection, or this route on a tenant one, is 400.`;

/** The tenant record routes (/api/v1/data/{collection}…, /api/v1/batch) again for an organization's records. */
export function orgRecordOperations(all: Operation[]): Operation[] {
  const records = `${org}/collections/:collection/records`;
  return all.flatMap((op): Operation[] => {
    const path = op.path.startsWith("/api/v1/data/:collection") ? op.path.replace("/api/v1/data/:collection", records) : op.path === "/api/v1/batch" ? `${org}/batch` : undefined;
    if (!path) return [];
    const errors = [...new Set([...(op.errors ?? []), "not_found" as const, "forbidden" as const])];
    return [{ ...op, path, tag: "orgs", summary: `${op.summary} of the organization`, errors, description: op.description ? `${ORG_RECORDS_NOTE} ${op.description}` : ORG_RECORDS_NOTE }];
  });
}
