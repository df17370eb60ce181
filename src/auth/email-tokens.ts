import { hashToken, newToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import type { Core } from "../core.ts";
import type { AppRow, ConsumeOutcome, EmailTokenPurpose } from "../db/types.ts";

export const EMAIL_TOKEN_TTL_MS: Record<EmailTokenPurpose, number> = {
  verify: 24 * 3600 * 1000,
  reset: 3600 * 1000,
};
const PREFIX: Record<EmailTokenPurpose, string> = { verify: "evt", reset: "rst" };

/** A random token of the purpose's shape (unstored, it is the decoy answered for an unknown email). */
export function newEmailToken(purpose: EmailTokenPurpose): string {
  return newToken(PREFIX[purpose]);
}

/** Issues a single-use token (only its hash is stored); older tokens of the purpose stop working. */
export async function issueEmailToken(core: Core, app: AppRow, tenantId: string, purpose: EmailTokenPurpose): Promise<{ token: string; expiresAt: number }> {
  const token = newEmailToken(purpose);
  const createdAt = core.clock();
  const expiresAt = createdAt + EMAIL_TOKEN_TTL_MS[purpose];
  await core.db.emailTokens.issue({ hash: hashToken(token), appId: app.id, tenantId, purpose, createdAt, expiresAt });
  return { token, expiresAt };
}

const WHAT: Record<EmailTokenPurpose, string> = { verify: "verification", reset: "password reset" };
const AGAIN: Record<EmailTokenPurpose, string> = { verify: "Ask for a new verification email.", reset: "Ask for a new password reset email." };

/** 400 `invalid_token` with the reason in words when a token was refused. */
export function requireConsumed(outcome: ConsumeOutcome, purpose: EmailTokenPurpose): string {
  if (outcome.ok) return outcome.tenantId;
  const why = {
    unknown: `This ${WHAT[purpose]} token is not valid (it may have been replaced by a newer one).`,
    used: `This ${WHAT[purpose]} token was already used.`,
    expired: `This ${WHAT[purpose]} token has expired.`,
  }[outcome.reason];
  throw fail("invalid_token", `${why} ${AGAIN[purpose]}`);
}
