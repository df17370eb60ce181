import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { newId } from "../crypto/random.ts";
import { EmailSchema, PasswordSchema } from "./developers.ts";
import { newSession } from "../auth/sessions.ts";
import { toLocale } from "../auth/signup.ts";
import { isUniqueViolation } from "../db/shared.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { toIso } from "../clock.ts";

export const CreateTenantBody = v.strictObject({
  email: EmailSchema,
  /** absent: the tenant sets one through "forgot password" (or signs in with a provider) */
  password: v.optional(PasswordSchema),
  /** true: the address counts as verified at once and no verification email goes out */
  verified: v.optional(v.boolean(), false),
  locale: v.optional(v.string()),
});

/**
 * A tenant the developer creates, whatever the app's sign-up mode: no invite is needed and
 * no session is left open (the tenant signs in themselves). The `tenant.created` hook runs
 * as at sign-up, so the verification email goes out unless `verified`.
 */
export async function createTenantAsDeveloper(core: Core, app: AppRow, input: v.InferOutput<typeof CreateTenantBody>): Promise<TenantRow> {
  if (await core.db.tenants.findByEmail(app.id, input.email)) throw fail("email_exists", `A tenant with email ${input.email} already exists in this app.`);
  const now = core.clock();
  const tenant: TenantRow = {
    id: newId("tnt"),
    appId: app.id,
    email: input.email,
    passwordHash: input.password === undefined ? null : await core.passwords.hash(input.password),
    emailVerifiedAt: input.verified ? now : null,
    locale: toLocale(input.locale),
    parentTenantId: null,
    createdAt: now,
  };
  // The store creates a tenant with its first session only; that session is ended at once.
  const { session } = newSession(now);
  try {
    await core.db.tenants.createWithSession(tenant, session);
  } catch (e) {
    if (isUniqueViolation(e)) throw fail("email_exists", `A tenant with email ${input.email} already exists in this app.`);
    throw e;
  }
  await core.db.sessions.endAllForTenant(tenant.id, now, "admin");
  if (input.verified) await core.db.tenants.markVerified(tenant.id, now);
  await core.hooks.emit("tenant.created", { app, tenant, sendEmail: !input.verified && app.settings.email.sendEmail });
  return tenant;
}

/**
 * Turns a tenant's sign-in off (every session ends; sign-in is refused with a message that
 * says so) or back on. Logged as who did it, since it locks a person out.
 */
export async function setTenantSignIn(core: Core, app: AppRow, tenant: TenantRow, enabled: boolean, by: { developerId: string; ip: string }) {
  const now = core.clock();
  await core.db.admin.setSignInDisabled(app.id, tenant.id, enabled ? null : now);
  const sessionsEnded = enabled ? 0 : await core.db.sessions.endAllForTenant(tenant.id, now, "sign_in_disabled");
  core.log.info(enabled ? "tenant sign-in enabled" : "tenant sign-in disabled", { appId: app.id, tenantId: tenant.id, developerId: by.developerId, ip: by.ip, sessionsEnded });
  return { tenant: toPublicTenant(tenant), signInDisabledAt: toIso(await core.db.admin.signInDisabledAt(tenant.id)), sessionsEnded };
}

/** The developer vouches for the address: verified from now on, no email sent. */
export async function markTenantVerified(core: Core, tenant: TenantRow): Promise<TenantRow> {
  if (tenant.emailVerifiedAt !== null) throw fail("already_verified", "This email address is already verified.");
  const now = core.clock();
  await core.db.tenants.markVerified(tenant.id, now);
  return { ...tenant, emailVerifiedAt: now };
}
