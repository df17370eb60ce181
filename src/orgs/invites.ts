import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { OrgInviteRow, OrgJoinOutcome } from "../db/org-types.ts";
import { toIso } from "../clock.ts";
import { hashToken, newId, newToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { EmailSchema } from "../admin/developers.ts";
import { bodyObject, CreateInviteBody } from "../invites/shape.ts";
import { orgChanged, type OrgActor } from "./events.ts";
import { requireMember } from "./orgs.ts";
import { requireKnownRole, requireOutranks, requirePermission } from "./roles.ts";
import { orgInviteLink, queueOrgInviteEmail } from "./invite-email.ts";
import { toPublicOrg } from "./view.ts";
import { orgSeatPolicy, paidSeatsFull, syncAutoSeats, type OrgSeatPolicy } from "./billing-seats.ts";

const DAY_SECONDS = 24 * 3600;
/** How long an org invite lives when the body names no `expiresInSeconds`. */
export const DEFAULT_ORG_INVITE_SECONDS = 7 * DAY_SECONDS;

export const OrgInviteBody = bodyObject({
  ...CreateInviteBody.pipe[2].entries,
  email: v.optional(EmailSchema),
  role: v.optional(v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(32, "must be at most 32 characters")), "member"),
  locale: v.optional(v.pipe(v.string(), v.maxLength(35))),
});
export const AcceptBody = bodyObject({ token: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200)) });

/** `limit` null is unlimited; `used` counts members (owners too), `pending` email invites not used nor expired. */
export interface OrgSeats {
  limit: number | null;
  used: number;
  pending: number;
  remaining: number | null;
}

export async function orgSeats(core: Core, app: AppRow, orgId: string): Promise<OrgSeats> {
  const { limit } = await orgSeatPolicy(core, app, orgId);
  const { members, pending } = await core.db.orgs.seatCounts(app.id, orgId, core.clock());
  return { limit, used: members, pending, remaining: limit === null ? null : Math.max(0, limit - members - pending) };
}

export function toPublicOrgInvite(r: OrgInviteRow, now: number) {
  const spent = r.email !== null && r.usedAt !== null;
  return {
    id: r.id,
    kind: r.email === null ? ("link" as const) : ("email" as const),
    email: r.email,
    role: r.role,
    status: spent ? ("used" as const) : r.expiresAt <= now ? ("expired" as const) : ("pending" as const),
    uses: r.uses,
    createdAt: toIso(r.createdAt)!,
    expiresAt: toIso(r.expiresAt)!,
    usedAt: toIso(r.usedAt),
    usedByTenantId: r.usedByTenantId,
  };
}

/**
 * A new invite: by email (single use, for that address; it holds a seat until used or
 * expired) or, without `email`, a link anyone holding it may use until it expires. The
 * plaintext token is in this reply only.
 */
export async function createOrgInvite(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string, input: v.InferOutput<typeof OrgInviteBody>) {
  const org = await requireMember(core, app, orgId, actor.tenantId);
  requirePermission(app, org, "members.invite");
  requireKnownRole(app, input.role);
  requireOutranks(app, org, input.role, "invite as");
  const sendEmail = input.email !== undefined && app.settings.email.sendEmail;
  if (sendEmail && !app.settings.orgs.inviteUrl) {
    throw fail("invalid_request", "This app has no page to accept invitations yet: its developer sets settings.orgs.inviteUrl (with {token}) first. A link invite (no email) works without it.");
  }
  const now = core.clock();
  const token = newToken("org");
  const seconds = input.expiresInSeconds ?? DEFAULT_ORG_INVITE_SECONDS;
  const row: OrgInviteRow = {
    id: newId("oin"), orgId, appId: app.id, createdBy: actor.tenantId, email: input.email ?? null, role: input.role, tokenHash: hashToken(token),
    createdAt: now, expiresAt: now + seconds * 1000, usedAt: null, usedByTenantId: null, uses: 0,
  };
  const policy = await orgSeatPolicy(core, app, orgId);
  if (!(await core.db.orgs.createInvite(row, policy.enforced))) {
    if (policy.paid) throw paidSeatsFull(policy.enforced!, "Revoke an invite or remove a member, or ");
    throw fail("seats_full", `All ${policy.enforced} seats of this organization are taken by members or pending invites. Revoke an invite or remove a member first.`);
  }
  const link = orgInviteLink(app, token);
  if (sendEmail && link) {
    const inviter = (await core.db.tenants.findById(app.id, actor.tenantId))?.email ?? org.name;
    queueOrgInviteEmail(core, app, row.email!, input.locale, { orgName: org.name, inviter, link, days: Math.max(1, Math.round(seconds / DAY_SECONDS)) });
  }
  await orgChanged(core, app, actor, "org.invite.created", orgId, { inviteId: row.id, kind: row.email === null ? "link" : "email", role: row.role, ...(row.email && { email: row.email }) });
  return { invite: { ...toPublicOrgInvite(row, now), token, url: link }, seats: await orgSeats(core, app, orgId) };
}

export async function listOrgInvites(core: Core, app: AppRow, tenantId: string, orgId: string) {
  const org = await requireMember(core, app, orgId, tenantId);
  requirePermission(app, org, "members.invite");
  const now = core.clock();
  return { invites: (await core.db.orgs.listInvites(app.id, orgId)).map((r) => toPublicOrgInvite(r, now)), seats: await orgSeats(core, app, orgId) };
}

export async function revokeOrgInvite(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, orgId: string, id: string): Promise<void> {
  const org = await requireMember(core, app, orgId, actor.tenantId);
  requirePermission(app, org, "members.invite");
  const outcome = await core.db.orgs.revokeInvite(app.id, orgId, id);
  if (outcome === "not_found") throw fail("not_found", `No invite ${id} in this organization.`);
  if (outcome === "used") throw fail("conflict", "This invite was already used. To end that membership, remove the member.");
  await orgChanged(core, app, actor, "org.invite.revoked", orgId, { inviteId: id });
}

/** The error for a join that did not happen, shared by accept and sign-up; past paid seats (`policy.paid`) it is 402. */
export function orgJoinFailure(outcome: Exclude<OrgJoinOutcome, { kind: "joined" }>, policy?: OrgSeatPolicy) {
  switch (outcome.kind) {
    case "invalid":
      return fail("invalid_token", "This organization invite is unknown, already used, revoked or expired. Ask for a new one.");
    case "wrong_email":
      return fail("forbidden", "This invitation was sent to another email address: sign in with that address to accept it.");
    case "full":
      if (policy?.paid) return paidSeatsFull(policy.enforced!, "");
      return fail("seats_full", "Every seat of this organization is taken. Ask an admin to free a seat or add seats.");
    case "already_member":
      return fail("conflict", "You are already a member of this organization.");
  }
}

/** Announces a join that happened (accept, or sign-up with an org invite). */
export async function orgJoined(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, email: string, joined: { orgId: string; role: string }, via: string): Promise<void> {
  await orgChanged(core, app, actor, "org.member.added", joined.orgId, { role: joined.role, via }, { tenantId: actor.tenantId, email });
  await syncAutoSeats(core, app, joined.orgId);
}

/** A signed-in tenant accepts an invite. */
export async function acceptOrgInvite(core: Core, app: AppRow, actor: OrgActor & { tenantId: string }, token: string) {
  const tenant = await core.db.tenants.findById(app.id, actor.tenantId);
  if (!tenant) throw fail("session_ended", "This account no longer exists.");
  const hash = hashToken(token);
  const invite = await core.db.orgs.findInviteByHash(app.id, hash);
  const policy = invite ? await orgSeatPolicy(core, app, invite.orgId) : undefined;
  const outcome = await core.db.orgs.join(app.id, hash, tenant.id, tenant.email, policy?.enforced ?? null, core.clock());
  if (outcome.kind !== "joined") throw orgJoinFailure(outcome, policy);
  await orgJoined(core, app, actor, tenant.email, outcome, "accept");
  return { org: toPublicOrg(await requireMember(core, app, outcome.orgId, tenant.id)) };
}
