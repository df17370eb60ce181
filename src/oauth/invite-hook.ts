import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { prepareInviteClaim, type InviteClaim } from "../invites/claim.ts";

/**
 * Decides whether social login may create a tenant, the same way password sign-up does: an
 * invite-only app needs a valid invite token or family invite, and a token that is given must
 * be valid. The claim's step uses the invite up in the transaction that creates the tenant
 * (pass it to oauth.createTenant); a family invite makes the new tenant a member.
 */
export async function checkSignupInvite(core: Core, app: AppRow, inviteToken: string | null): Promise<InviteClaim | undefined> {
  return prepareInviteClaim(core, app, inviteToken);
}
