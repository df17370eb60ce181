import * as v from "valibot";
import { hashToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { PasswordSchema } from "../admin/developers.ts";
import { accountKey, clearLoginBackoff } from "./login-backoff.ts";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { queueTenantEmail } from "../email/tenant-email.ts";
import { issueEmailToken, newEmailToken, requireConsumed } from "./email-tokens.ts";
import { toLocale, type Locale } from "./signup.ts";

/**
 * Starts a password reset. With email delivery the answer is nothing (204); when the app
 * delivers its own email it is the token and the tenant's locale. An unknown email gets the
 * same answer: nothing, or a decoy token that works nowhere, so the reply tells no one whether
 * the address has an account.
 */
export async function requestPasswordReset(
  core: Core,
  app: AppRow,
  input: { email: string; sendEmail: boolean; fallbackLocale: Locale },
): Promise<{ resetToken: string; locale: Locale } | null> {
  const tenant = await core.db.tenants.findByEmail(app.id, input.email);
  if (!tenant) return input.sendEmail ? null : { resetToken: newEmailToken("reset"), locale: input.fallbackLocale };
  const { token } = await issueEmailToken(core, app, tenant.id, "reset");
  if (!input.sendEmail) return { resetToken: token, locale: toLocale(tenant.locale) };
  queueTenantEmail(core, app, tenant, "reset", token);
  return null;
}

/** The password rule of sign-up, here too whoever calls (the JSON API, the HTML form of the email link). */
export function requireNewPassword(password: string): void {
  const checked = v.safeParse(PasswordSchema, password);
  if (!checked.success) {
    throw fail("invalid_request", `${checked.issues[0].message}. A new password is 8 to 256 characters and not one of the most common passwords.`);
  }
}

/**
 * Sets a new password with a reset token; every session of the tenant ends, and so does any
 * sign-in backoff on the account: whoever was guessing, the password they guessed at is gone.
 */
export async function resetPassword(core: Core, app: AppRow, token: string, password: string): Promise<string> {
  requireNewPassword(password);
  const hash = hashToken(token);
  // Refuse a bad token before spending argon2 on it; the final check is atomic with the update.
  requireConsumed(await core.db.emailTokens.check(hash, app.id, "reset", core.clock()), "reset");
  const passwordHash = await core.passwords.hash(password);
  const tenantId = requireConsumed(await core.db.emailTokens.resetPassword(hash, app.id, passwordHash, core.clock()), "reset");
  const tenant = await core.db.tenants.findById(app.id, tenantId);
  if (tenant) await clearLoginBackoff(core, accountKey("tenant", tenant.email, app.id));
  return tenantId;
}
