import type { Core } from "../../core.ts";
import type { AppRow, TenantRow } from "../../db/types.ts";
import { fail } from "../../errors.ts";
import { accountKey, withLoginBackoff } from "../login-backoff.ts";
import { startSession, type TokenPair } from "../sessions.ts";
import { checkTotp, confirmTotp } from "./totp.ts";
import { useRecoveryCode } from "./recovery-codes.ts";
import { consumeTicket, readTicket, ticketFailed, type Ticket } from "./ticket.ts";

/** How a ticket is answered: a code of the authenticator app, a recovery code, or a passkey (checked by the caller). */
export type SecondFactorProof = { code: string } | { recoveryCode: string } | { passkey: (tenantId: string) => Promise<void> };

const isCredentialError = (e: unknown) => (e as { body?: { error?: string } }).body?.error === "invalid_credentials";

/**
 * Wrong answers count on the ticket (5 and it stops working) and on the account's sign-in
 * backoff (its own key, so codes and passwords do not share a count): a ticket cannot be
 * used to guess codes at speed, nor can fresh tickets.
 */
async function underBackoff(core: Core, app: AppRow, ticket: Ticket, client: string, check: () => Promise<void>): Promise<void> {
  await withLoginBackoff(
    core,
    { account: accountKey("tenant", `mfa:${ticket.tenantId}`, app.id), client },
    async () => {
      try {
        await check();
      } catch (e) {
        if (!isCredentialError(e)) throw e;
        throw fail("invalid_credentials", `${(e as Error).message} ${await ticketFailed(core, ticket)}`);
      }
    },
    (wait) => `Too many wrong codes for this account. Try again in ${wait} seconds.`,
  );
}

async function finish(core: Core, app: AppRow, ticket: Ticket, second: string): Promise<{ tenant: TenantRow; tokens: TokenPair; method: string }> {
  await consumeTicket(core, app, ticket);
  const tenant = await core.db.tenants.findById(app.id, ticket.tenantId);
  if (!tenant) throw fail("invalid_token", "This account no longer exists.");
  const method = `${ticket.first}+${second}`;
  return { tenant, tokens: await startSession(core, tenant, method), method };
}

/** Answers an MFA ticket with a second factor: the sign-in's tokens. */
export async function verifyMfa(core: Core, app: AppRow, mfaTicket: string, proof: SecondFactorProof, client: string) {
  const ticket = await readTicket(core, app, mfaTicket);
  if (ticket.enrollmentRequired) {
    throw fail("invalid_request", "This app requires two-factor authentication and the account has none yet: enrol with POST /api/v1/auth/mfa/totp and this ticket.");
  }
  const method = "code" in proof ? "totp" : "recoveryCode" in proof ? "recovery_code" : "passkey";
  await underBackoff(core, app, ticket, client, async () => {
    if ("code" in proof) await checkTotp(core, app, ticket.tenantId, proof.code);
    else if ("recoveryCode" in proof) await useRecoveryCode(core, app, ticket.tenantId, proof.recoveryCode);
    else await proof.passkey(ticket.tenantId);
  });
  return finish(core, app, ticket, method);
}

/** An enrolment-only ticket (the app requires MFA): confirming the first code signs the tenant in. */
export async function confirmWithTicket(core: Core, app: AppRow, mfaTicket: string, code: string, client: string) {
  const ticket = await requireEnrolmentTicket(core, app, mfaTicket);
  let codes: { recoveryCodes: string[] } | undefined;
  await underBackoff(core, app, ticket, client, async () => {
    codes = await confirmTotp(core, app, ticket.tenantId, code);
  });
  return { ...(await finish(core, app, ticket, "totp")), recoveryCodes: codes!.recoveryCodes };
}

export async function requireEnrolmentTicket(core: Core, app: AppRow, mfaTicket: string): Promise<Ticket> {
  const ticket = await readTicket(core, app, mfaTicket);
  if (!ticket.enrollmentRequired) throw fail("invalid_request", "This account already has two-factor authentication: answer the ticket with POST /api/v1/auth/mfa/verify.");
  return ticket;
}
