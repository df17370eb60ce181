import type { Core } from "../core.ts";
import type { TenantAuth } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { requireNewPassword } from "./password-reset.ts";
import { requireRecentAuth } from "./step-up.ts";
import { securityEvent } from "./security-events.ts";

/**
 * Sets a new password for the signed-in tenant: a sensitive action, so the session must have
 * authenticated recently (step-up). Every other session of the tenant ends; this one stays.
 * An account without a password (social login, passkeys) gains one: the tenant is told.
 */
export async function changePassword(core: Core, auth: TenantAuth, newPassword: string): Promise<void> {
  requireNewPassword(newPassword);
  await requireRecentAuth(core, auth, "Changing the password");
  const tenant = await core.db.tenants.findById(auth.app.id, auth.tenantId);
  if (!tenant) throw fail("session_ended", "This account no longer exists.");
  const hash = await core.passwords.hash(newPassword);
  await core.db.mfa.changePassword(auth.app.id, tenant.id, hash, auth.sessionId, core.clock());
  if (tenant.passwordHash === null) await securityEvent(core, auth.app, tenant.id, "sign_in_method.added", { method: "password" });
}
