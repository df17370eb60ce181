import type { Core } from "../../core.ts";
import type { AppRow, AuthChallengeRow, ChallengeOutcome } from "../../db/types.ts";
import { hashToken, newToken } from "../../crypto/random.ts";
import { fail } from "../../errors.ts";
import { secondFactors, type MfaFactors, type SecondFactor } from "./factors.ts";

export const MFA_TICKET_TTL_SECONDS = 5 * 60;
/** Wrong codes one ticket takes before it stops working (the account's backoff counts them too). */
export const MFA_TICKET_ATTEMPTS = 5;

/** The login reply when a second factor is needed. */
export interface MfaChallenge {
  mfaRequired: true;
  mfaTicket: string;
  /** The second factors this tenant can use; empty when it must enrol first. */
  methods: SecondFactor[];
  /** The app requires MFA and the tenant has none: the ticket only allows enrolling TOTP. */
  enrollmentRequired: boolean;
  expiresIn: number;
}

interface TicketData {
  /** How the first factor was proven ("password", "oauth:github"). */
  first: string;
  enrollmentRequired: boolean;
}

export async function issueMfaTicket(core: Core, app: AppRow, tenantId: string, firstFactor: string, factors: MfaFactors): Promise<MfaChallenge> {
  const methods = secondFactors(factors);
  const enrollmentRequired = methods.length === 0;
  const ticket = newToken("mft");
  const now = core.clock();
  const data: TicketData = { first: firstFactor, enrollmentRequired };
  await core.db.mfa.createChallenge({
    hash: hashToken(ticket),
    appId: app.id,
    tenantId,
    kind: "mfa_ticket",
    data: JSON.stringify(data),
    createdAt: now,
    expiresAt: now + MFA_TICKET_TTL_SECONDS * 1000,
  });
  return { mfaRequired: true, mfaTicket: ticket, methods, enrollmentRequired, expiresIn: MFA_TICKET_TTL_SECONDS };
}

export interface Ticket {
  hash: string;
  tenantId: string;
  first: string;
  enrollmentRequired: boolean;
}

const AGAIN = "Sign in again for a new one.";

function requireTicket(outcome: ChallengeOutcome): AuthChallengeRow {
  if (outcome.ok && outcome.row.attempts < MFA_TICKET_ATTEMPTS) return outcome.row;
  const why = !outcome.ok
    ? { unknown: "This MFA ticket is not valid (it belongs to no sign-in of this app).", used: "This MFA ticket was already used.", expired: `This MFA ticket has expired (it lasts ${MFA_TICKET_TTL_SECONDS / 60} minutes).` }[outcome.reason]
    : `This MFA ticket took ${MFA_TICKET_ATTEMPTS} wrong codes and no longer works.`;
  throw fail("invalid_token", `${why} ${AGAIN}`);
}

const toTicket = (row: AuthChallengeRow): Ticket => {
  const data = JSON.parse(row.data) as TicketData;
  return { hash: row.hash, tenantId: row.tenantId!, first: data.first, enrollmentRequired: data.enrollmentRequired };
};

/** The ticket as it stands, not used up (a code is checked against it first). */
export async function readTicket(core: Core, app: AppRow, ticket: string): Promise<Ticket> {
  return toTicket(requireTicket(await core.db.mfa.peekChallenge(hashToken(ticket), app.id, "mfa_ticket", core.clock())));
}

/** Uses the ticket up: a second use, even concurrent, is refused. */
export async function consumeTicket(core: Core, app: AppRow, ticket: Ticket): Promise<void> {
  const outcome = await core.db.mfa.consumeChallenge(ticket.hash, app.id, "mfa_ticket", core.clock());
  if (!outcome.ok) requireTicket(outcome);
}

/** Counts a wrong code against the ticket; the message says how many are left. */
export async function ticketFailed(core: Core, ticket: Ticket): Promise<string> {
  const left = MFA_TICKET_ATTEMPTS - (await core.db.mfa.failChallenge(ticket.hash));
  return left > 0 ? `${left} attempt${left === 1 ? "" : "s"} left on this ticket.` : `The ticket no longer works. ${AGAIN}`;
}
