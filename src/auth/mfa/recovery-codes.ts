import { randomBytes } from "node:crypto";
import { encodeBase32LowerCaseNoPadding } from "@oslojs/encoding";
import type { Core } from "../../core.ts";
import type { AppRow } from "../../db/types.ts";
import { hmacSha256 } from "../../crypto/hmac.ts";
import { fail } from "../../errors.ts";
import { securityEvent } from "../security-events.ts";

export const RECOVERY_CODE_COUNT = 10;

const macs = new WeakMap<Core, ReturnType<typeof hmacSha256>>();

/**
 * A code's stored form: an HMAC under a key derived from the server key, not a bare hash.
 * A code holds 50 bits, few enough that a leaked table alone could be searched; without
 * the server key it cannot.
 */
function codeHash(core: Core, code: string): string {
  let mac = macs.get(core);
  if (!mac) macs.set(core, (mac = hmacSha256(core.secrets.deriveKey("recovery-codes"))));
  return mac(code.toLowerCase().replace(/[\s-]/g, ""), "hex");
}

/** Ten fresh codes, `xxxxx-xxxxx`, and their stored hashes. */
export function newRecoveryCodes(core: Core): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const raw = encodeBase32LowerCaseNoPadding(randomBytes(7)).slice(0, 10);
    return `${raw.slice(0, 5)}-${raw.slice(5)}`;
  });
  return { codes, hashes: codes.map((c) => codeHash(core, c)) };
}

/** Replaces every recovery code (the old ones stop working); needs TOTP on. */
export async function regenerateRecoveryCodes(core: Core, app: AppRow, tenantId: string): Promise<{ recoveryCodes: string[] }> {
  const totp = await core.db.mfa.totp(app.id, tenantId);
  if (totp?.confirmedAt == null) throw fail("invalid_request", "Recovery codes come with two-factor authentication: turn it on first (POST /api/v1/auth/mfa/totp).");
  const { codes, hashes } = newRecoveryCodes(core);
  await core.db.mfa.replaceRecoveryCodes(tenantId, hashes, core.clock());
  return { recoveryCodes: codes };
}

/** Uses one recovery code in place of a second factor; the tenant is told by email. */
export async function useRecoveryCode(core: Core, app: AppRow, tenantId: string, code: string): Promise<void> {
  const left = await core.db.mfa.useRecoveryCode(tenantId, codeHash(core, code), core.clock());
  if (left === null) throw fail("invalid_credentials", "Wrong or already used recovery code.");
  await securityEvent(core, app, tenantId, "mfa.recovery_code_used", { recoveryCodesLeft: left });
}
