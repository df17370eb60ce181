import type { Core } from "../core.ts";
import { sendVerificationEmail } from "./verify-email.ts";

/** Hooks of the auth area; runs for the server and the CLI alike. */
export function installAuth(core: Core): void {
  // Every way a tenant comes to exist (signup, invites, family) sends one verification email,
  // unless the request or the app said the app delivers its own email.
  core.hooks.on("tenant.created", async ({ app, tenant, sendEmail }) => {
    if (!sendEmail || tenant.emailVerifiedAt !== null) return;
    try {
      await sendVerificationEmail(core, app, tenant);
    } catch (e) {
      core.log.error("verification email not queued", { tenantId: tenant.id, error: e instanceof Error ? e.message : String(e) });
    }
  });
}
