import { randomBytes } from "node:crypto";
import type { Core } from "../../core.ts";
import type { AppRow, AuthChallengeKind, AuthChallengeRow, ChallengeOutcome } from "../../db/types.ts";
import { hashToken } from "../../crypto/random.ts";
import { fail } from "../../errors.ts";

export const PASSKEY_CHALLENGE_TTL_SECONDS = 5 * 60;

/** A fresh challenge for one ceremony of this app, stored by hash, optionally bound to a tenant. */
export async function newChallenge(core: Core, app: AppRow, kind: AuthChallengeKind, tenantId: string | null): Promise<string> {
  const challenge = randomBytes(32).toString("base64url");
  const now = core.clock();
  await core.db.mfa.createChallenge({ hash: hashToken(challenge), appId: app.id, tenantId, kind, data: "{}", createdAt: now, expiresAt: now + PASSKEY_CHALLENGE_TTL_SECONDS * 1000 });
  return challenge;
}

/** The challenge the browser signed, read from the response's clientDataJSON. */
export function signedChallenge(clientDataJSON: string): string {
  try {
    const data = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")) as { challenge?: unknown };
    if (typeof data.challenge === "string" && data.challenge.length > 0 && data.challenge.length <= 128) return data.challenge;
  } catch {
    // answered below
  }
  throw fail("invalid_request", "The passkey response's clientDataJSON is not base64url JSON holding a challenge.");
}

/**
 * Uses the challenge up before anything else is checked: a challenge answers one ceremony,
 * whether that ceremony then succeeds or not. Another app's or another ceremony's challenge is unknown here.
 */
export async function consumeChallenge(core: Core, app: AppRow, kind: AuthChallengeKind, challenge: string): Promise<AuthChallengeRow> {
  return usedOrRefused(await core.db.mfa.consumeChallenge(hashToken(challenge), app.id, kind, core.clock()));
}

/** consumeChallenge, with the app's passkey of `credentialId` read in the same step (undefined: none). */
export async function consumePasskeyChallenge(core: Core, app: AppRow, kind: AuthChallengeKind, challenge: string, credentialId: string) {
  const { outcome, passkey } = await core.db.mfa.consumePasskeyChallenge(hashToken(challenge), app.id, kind, core.clock(), credentialId);
  return { issued: usedOrRefused(outcome), passkey };
}

function usedOrRefused(outcome: ChallengeOutcome): AuthChallengeRow {
  if (outcome.ok) return outcome.row;
  const why = {
    unknown: "This passkey challenge is not one this app issued for this step.",
    used: "This passkey challenge was already used.",
    expired: `This passkey challenge has expired (it lasts ${PASSKEY_CHALLENGE_TTL_SECONDS / 60} minutes).`,
  }[outcome.reason];
  throw fail("invalid_token", `${why} Ask for new options and try again.`);
}
