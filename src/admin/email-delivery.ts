import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";

/**
 * A developer's resend must reach someone. With `sendEmail: false` the link travels only in
 * the `tenant.email.resend_verification` webhook event, or to an embedding app's own
 * `tenant.verificationResent` handler; with neither, the event is logged `invalid_config` and
 * dropped, so the resend is refused and says how to fix it.
 */
export async function requireVerificationDelivery(core: Core, app: AppRow): Promise<void> {
  if (app.settings.email.sendEmail || core.hooks.appListens("tenant.verificationResent") || (await core.db.webhooks.findConfig(app.id))) return;
  throw fail(
    "conflict",
    "Nothing would deliver this email: the app sends its own email (settings.email.sendEmail is false) and has no webhook URL, so the tenant.email.resend_verification event carrying the link would be dropped. Set a webhook URL, or let tenantd send the email.",
  );
}
