import type { H3Event } from "h3";
import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { startSession, type TokenPair } from "./sessions.ts";
import { issueMfaTicket, type MfaChallenge } from "./mfa/ticket.ts";
import { mfaFactors } from "./mfa/factors.ts";
import { toPublicTenant } from "./tenant-view.ts";
import { auditSignedIn } from "../audit/http.ts";

/** A sign-in that proved its first factor: tokens, or a ticket for the second factor. */
export type SignInOutcome = { tenant: TenantRow; method: string } & ({ tokens: TokenPair; mfa?: undefined } | { mfa: MfaChallenge; tokens?: undefined });

/**
 * Every first-factor sign-in ends here once the factor is proven (password, social login,
 * passkey, and the methods added beside them). A tenant with a second factor, or any tenant
 * of an app with `settings.auth.requireMfa`, gets a short-lived single-use MFA ticket in
 * place of tokens. `firstFactor` names the method ("password", "oauth:github", "passkey") and
 * is recorded on the session for step-up. A passkey checked with user verification is two
 * factors already (the device and its PIN or biometric): `strong` skips the ticket. A passkey
 * sign-in does what `strong` does in its own code, to write its session with its counter
 * (passkeys/service.ts).
 */
export async function finishSignIn(core: Core, app: AppRow, tenant: TenantRow, firstFactor: string, strong = false): Promise<SignInOutcome> {
  // One read decides for most sign-ins (no TOTP, MFA not required); the rest list the factors.
  if (!strong && (app.settings.auth.requireMfa || (await core.db.mfa.totp(app.id, tenant.id))?.confirmedAt != null)) {
    return { tenant, method: firstFactor, mfa: await issueMfaTicket(core, app, tenant.id, firstFactor, await mfaFactors(core, app, tenant.id)) };
  }
  return { tenant, method: firstFactor, tokens: await startSession(core, tenant, firstFactor) };
}

/** The JSON reply of a sign-in: the tenant and its tokens, or the MFA step (no tenant before the second factor). */
export function signInReply(outcome: SignInOutcome) {
  return outcome.mfa ? outcome.mfa : { tenant: toPublicTenant(outcome.tenant), ...outcome.tokens };
}

/**
 * The reply of a sign-in route. A completed sign-in is audited here, once; a sign-in that
 * stopped at the MFA ticket is audited when the second factor completes it.
 */
export async function signInResponse(core: Core, event: H3Event, app: AppRow, outcome: SignInOutcome) {
  if (outcome.tokens) await auditSignedIn(core, event, app.id, outcome.tenant.id, outcome.method);
  return signInReply(outcome);
}
