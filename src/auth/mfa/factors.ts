import type { Core } from "../../core.ts";
import type { AppRow } from "../../db/types.ts";

export type SecondFactor = "totp" | "recovery_code" | "passkey";

export interface MfaFactors {
  /** TOTP enrolled and confirmed: the tenant has MFA on. */
  totp: boolean;
  passkeys: number;
  recoveryCodes: number;
}

export async function mfaFactors(core: Core, app: AppRow, tenantId: string): Promise<MfaFactors> {
  const [totp, passkeys, recoveryCodes] = await Promise.all([
    core.db.mfa.totp(app.id, tenantId),
    core.db.mfa.passkeys(app.id, tenantId),
    core.db.mfa.recoveryCodesLeft(tenantId),
  ]);
  return { totp: totp?.confirmedAt != null, passkeys: passkeys.length, recoveryCodes };
}

/** The second factors a tenant can answer a ticket with. */
export function secondFactors(f: MfaFactors): SecondFactor[] {
  return [...(f.totp ? (["totp"] as const) : []), ...(f.recoveryCodes > 0 ? (["recovery_code"] as const) : []), ...(f.passkeys > 0 ? (["passkey"] as const) : [])];
}
