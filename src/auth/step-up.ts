import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { refuseImpersonatedWrite, type TenantAuth } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { withLoginBackoff, accountKey } from "./login-backoff.ts";
import { checkTotp } from "./mfa/totp.ts";
import { useRecoveryCode } from "./mfa/recovery-codes.ts";
import { verifyAssertion } from "./passkeys/proof.ts";

const minutes = (seconds: number) => (seconds % 60 === 0 ? `${seconds / 60} minute${seconds === 60 ? "" : "s"}` : `${seconds} seconds`);

/**
 * Refuses a sensitive action unless the session authenticated within the app's
 * `settings.auth.stepUpSeconds`; the error says how to re-authenticate.
 */
export async function requireRecentAuth(core: Core, auth: Pick<TenantAuth, "app" | "sessionId" | "impersonatedBy">, action: string): Promise<void> {
  // A developer's impersonation session never proves the tenant (the export is a GET).
  if (auth.impersonatedBy !== undefined) throw refuseImpersonatedWrite();
  const window = auth.app.settings.auth.stepUpSeconds;
  const s = await core.db.mfa.sessionAuth(auth.sessionId);
  if (s && core.clock() - s.authenticatedAt <= window * 1000) return;
  throw fail(
    "reauthentication_required",
    `${action} needs a sign-in within the last ${minutes(window)}. Confirm it is you with POST /api/v1/auth/reauthenticate ` +
      `({ password }, { code } from your authenticator app, or { passkey } answering POST /api/v1/auth/passkeys/options with { purpose: "reauthenticate" }), then try again.`,
  );
}

export type ReauthProof = { password: string } | { code: string } | { recoveryCode: string } | { passkey: unknown };

/**
 * Proves the tenant again on this session and restarts its step-up window. Wrong answers
 * count toward the account's sign-in backoff like wrong passwords at login. Returns the method
 * that proved it ("password", "totp", "recovery_code", "passkey").
 */
export async function reauthenticate(core: Core, app: AppRow, auth: Pick<TenantAuth, "tenantId" | "sessionId">, proof: ReauthProof, client: string): Promise<string> {
  if ("passkey" in proof) {
    // A passkey cannot be guessed: no backoff, its challenge is single-use.
    await verifyAssertion(core, app, proof.passkey, "passkey_reauth", auth.tenantId);
    await markReauthenticated(core, auth.sessionId, "passkey");
    return "passkey";
  }
  const tenant = await core.db.tenants.findById(app.id, auth.tenantId);
  if (!tenant) throw fail("session_ended", "This account no longer exists.");
  const method = "password" in proof ? "password" : "code" in proof ? "totp" : "recovery_code";
  await withLoginBackoff(core, { account: accountKey("tenant", tenant.email, app.id), client }, async () => {
    if ("password" in proof) {
      if (!tenant.passwordHash) throw fail("invalid_request", "This account has no password: confirm with a passkey or an authenticator code.");
      if (!(await core.passwords.verify(tenant.passwordHash, proof.password))) throw fail("invalid_credentials", "Wrong password.");
    } else if ("code" in proof) await checkTotp(core, app, tenant.id, proof.code);
    else await useRecoveryCode(core, app, tenant.id, proof.recoveryCode);
  });
  await markReauthenticated(core, auth.sessionId, method);
  return method;
}

async function markReauthenticated(core: Core, sessionId: string, method: string): Promise<void> {
  await core.db.mfa.markAuthenticated(sessionId, core.clock(), method);
}
