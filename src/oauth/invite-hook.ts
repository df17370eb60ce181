import type { Core } from "../core.ts";
import type { AppRow } from "../db/apps.ts";
import { fail } from "../errors.ts";

/**
 * Decides whether social login may create a tenant in an invite-only app. Today it only
 * asks for a token; the invites area replaces the body to validate it (the token reaches
 * that area's `tenant.created` handler, which consumes it).
 */
export async function checkSignupInvite(core: Core, app: AppRow, inviteToken: string | null): Promise<void> {
  void core;
  if (app.settings.signupMode === "invite_only" && !inviteToken) {
    throw fail("invite_required", "This app is invite-only: start social login with an inviteToken.");
  }
}
