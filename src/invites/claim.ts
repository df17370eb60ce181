import type { Core } from "../core.ts";
import type { AppRow, InTransactionStep } from "../db/types.ts";
import { hashToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { familySeatLimit } from "../family/seats.ts";
import { requireJoined } from "../family/outcomes.ts";
import { orgJoinFailure } from "../orgs/invites.ts";
import { orgSeatPolicy } from "../orgs/billing-seats.ts";

/** How a new tenant uses its invite: the step runs inside the transaction that creates it. */
export interface InviteClaim {
  kind: "invite" | "family" | "org";
  /** the family owner, for a family invite: the new tenant is a member from its first token */
  parentTenantId: string | null;
  step: InTransactionStep;
}

const invalid = () => fail("invalid_token", "This invite token is unknown, already used or expired. Ask for a new invite.");

/**
 * Checks the invite a sign-up (password, social login or family consume) names: an invite
 * token or a family invite. Invite-only apps need one; elsewhere one that is given must be
 * valid (a silently ignored typo would lose the inviter's record). The returned step uses
 * it up atomically with the tenant's creation, so of two sign-ups racing for one token,
 * one is created and the other is refused with nothing created.
 */
export async function prepareInviteClaim(core: Core, app: AppRow, token: string | null | undefined, only?: "family", email?: string): Promise<InviteClaim | undefined> {
  if (!token) {
    if (app.settings.signupMode === "invite_only") throw fail("invite_required", "This app is invite-only: sign up with an inviteToken (an invite token or a family invite).");
    return undefined;
  }
  const now = core.clock();
  const hash = hashToken(token);
  const invite = only ? undefined : await core.db.invites.findByHash(app.id, hash);
  if (invite) {
    if (invite.usedAt !== null || invite.expiresAt <= now) throw invalid();
    return {
      kind: "invite",
      parentTenantId: null,
      step: (tenantId) => {
        if (!core.db.invites.useInTransaction(app.id, hash, tenantId, now)) throw invalid();
      },
    };
  }
  // An organization invite: the new tenant joins the organization (one sent by email only at that address).
  const org = only ? undefined : await core.db.orgs.findInviteByHash(app.id, hash);
  if (org) {
    if (org.expiresAt <= now || (org.email !== null && org.usedAt !== null)) throw invalid();
    const policy = await orgSeatPolicy(core, app, org.orgId);
    return {
      kind: "org",
      parentTenantId: null,
      step: (tenantId) => {
        const joined = core.db.orgs.joinInTransaction(app.id, hash, tenantId, email ?? "", policy.enforced, now);
        if (joined.kind !== "joined") throw orgJoinFailure(joined, policy);
      },
    };
  }
  const family = await core.db.family.findInviteByHash(app.id, hash);
  if (!family || family.usedAt !== null || family.expiresAt <= now) {
    throw only ? fail("invalid_token", "This family invite is unknown, already used, revoked or expired. Ask the owner for a new one.") : invalid();
  }
  const limit = await familySeatLimit(core, app, family.tenantId);
  return {
    kind: "family",
    parentTenantId: family.tenantId,
    step: (tenantId) => void requireJoined(core.db.family.joinInTransaction(app.id, hash, tenantId, limit, now)),
  };
}
