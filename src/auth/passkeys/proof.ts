import * as v from "valibot";
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { Core } from "../../core.ts";
import type { AppRow, AuthChallengeKind, PasskeyRow } from "../../db/types.ts";
import { fail } from "../../errors.ts";
import { parseInput } from "../../http/body.ts";
import { relyingParty } from "./relying-party.ts";
import { consumeChallenge, signedChallenge } from "./challenges.ts";

const b64url = v.pipe(v.string(), v.maxLength(16_384), v.regex(/^[A-Za-z0-9_-]*$/, "must be base64url"));

/** What `navigator.credentials.get()` gives, as JSON (`PublicKeyCredential.toJSON()`). */
export const AssertionSchema = v.object({
  id: b64url,
  rawId: b64url,
  type: v.literal("public-key", 'must be "public-key"'),
  response: v.object({ clientDataJSON: b64url, authenticatorData: b64url, signature: b64url, userHandle: v.optional(v.nullable(b64url)) }),
  clientExtensionResults: v.optional(v.record(v.string(), v.unknown()), {}),
  authenticatorAttachment: v.optional(v.nullable(v.string())),
});

/**
 * Checks a passkey assertion: the challenge (this app's, this step's, unused, unexpired),
 * the credential (registered in this app, the bound tenant's when the challenge names one),
 * origin and RP id, the signature, user verification, and a signature counter that moved
 * forward. Returns the passkey that signed.
 */
export async function verifyAssertion(core: Core, app: AppRow, raw: unknown, kind: AuthChallengeKind, tenantId?: string): Promise<PasskeyRow> {
  const rp = relyingParty(app);
  const response = parseInput(AssertionSchema, raw, "passkey") as AuthenticationResponseJSON;
  const challenge = signedChallenge(response.response.clientDataJSON);
  const issued = await consumeChallenge(core, app, kind, challenge);
  const passkey = await core.db.mfa.passkeyByCredential(app.id, response.id);
  if (!passkey) throw fail("invalid_credentials", "This passkey is not registered with this app.");
  const owner = tenantId ?? issued.tenantId;
  if ((owner && passkey.tenantId !== owner) || (issued.tenantId && issued.tenantId !== passkey.tenantId)) {
    throw fail("invalid_credentials", "This passkey belongs to another account.");
  }
  let info: { newCounter: number };
  try {
    const result = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: { id: passkey.credentialId, publicKey: Buffer.from(passkey.publicKey, "base64url"), counter: passkey.counter },
      requireUserVerification: true,
    });
    if (!result.verified) throw new Error("the signature does not verify");
    info = result.authenticationInfo;
  } catch (e) {
    const message = (e as Error).message;
    if (/counter/i.test(message)) throw counterWentBack();
    throw fail("invalid_credentials", `The passkey response was refused: ${message.slice(0, 200)}`);
  }
  if (!(await core.db.mfa.usePasskey(passkey.id, passkey.counter, info.newCounter, core.clock()))) throw counterWentBack();
  return passkey;
}

const counterWentBack = () =>
  fail("invalid_credentials", "This passkey's signature counter did not move forward: the passkey may have been copied. Sign in another way, remove it and register it again.");

/** A passkey as the answer of a second-factor or re-authentication step, bound to its tenant. */
export function passkeyProof(core: Core, app: AppRow, raw: unknown, kind: AuthChallengeKind) {
  return async (tenantId: string): Promise<void> => {
    await verifyAssertion(core, app, raw, kind, tenantId);
  };
}
