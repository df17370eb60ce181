import { hashToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { emailLink, queueTenantEmail } from "../email/tenant-email.ts";
import { issueEmailToken, requireConsumed } from "./email-tokens.ts";
import { toLocale } from "./signup.ts";

/** Uses a verification token: the tenant's email is verified from now on. */
export async function verifyEmail(core: Core, app: AppRow, token: string): Promise<string> {
  return requireConsumed(await core.db.emailTokens.verifyEmail(hashToken(token), app.id, core.clock()), "verify");
}

/** Issues a verification token and queues the email; used at signup and on resend. */
export async function sendVerificationEmail(core: Core, app: AppRow, tenant: TenantRow, locale?: string): Promise<void> {
  const { token } = await issueEmailToken(core, app, tenant.id, "verify");
  queueTenantEmail(core, app, tenant, "verify", token, locale);
}

export interface ResendResult {
  /** `tenantd`: an email was queued; `app`: the app delivers its own email (hook `tenant.verificationResent`). */
  sentBy: "tenantd" | "app";
  expiresAt: number;
}

/**
 * A new verification token for a tenant whose email is not verified yet (asked by the tenant
 * or by the app's developer). When the app delivers its own email the token goes out through
 * the `tenant.verificationResent` hook (the `tenant.email.resend_verification` webhook).
 */
export async function resendVerification(core: Core, app: AppRow, tenant: TenantRow, locale?: string): Promise<ResendResult> {
  if (tenant.emailVerifiedAt !== null) throw fail("already_verified", "This email address is already verified.");
  if (locale !== undefined && toLocale(locale) !== tenant.locale) {
    // The language the person uses now becomes the one tenantd writes to them in.
    tenant = { ...tenant, locale: toLocale(locale) };
    await core.db.tenants.setLocale(tenant.id, tenant.locale);
  }
  const { token, expiresAt } = await issueEmailToken(core, app, tenant.id, "verify");
  if (!app.settings.email.sendEmail) {
    await core.hooks.emit("tenant.verificationResent", { app, tenant, verifyToken: token, verifyUrl: emailLink(core, app, "verify", token), expiresAt });
    return { sentBy: "app", expiresAt };
  }
  queueTenantEmail(core, app, tenant, "verify", token);
  return { sentBy: "tenantd", expiresAt };
}

