import * as v from "valibot";
import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { Core } from "../../core.ts";
import type { AppRow, AuthChallengeKind, PasskeyRow } from "../../db/types.ts";
import { fail } from "../../errors.ts";
import { parseInput } from "../../http/body.ts";
import { relyingParty } from "./relying-party.ts";
import { consumePasskeyChallenge, signedChallenge } from "./challenges.ts";
import { checkSignature } from "./assertion.ts";

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
 * forward. Returns the passkey that signed and its new counter, which the caller stores
 * (compare-and-set against `passkey.counter`) before it trusts the assertion.
 */
export async function checkAssertion(core: Core, app: AppRow, raw: unknown, kind: AuthChallengeKind, tenantId?: string): Promise<{ passkey: PasskeyRow; newCounter: number }> {
  const rp = relyingParty(app);
  const response = parseInput(AssertionSchema, raw, "passkey") as AuthenticationResponseJSON;
  const challenge = signedChallenge(response.response.clientDataJSON);
  const { issued, passkey } = await consumePasskeyChallenge(core, app, kind, challenge, response.id);
  if (!passkey) throw fail("invalid_credentials", "This passkey is not registered with this app.");
  const owner = tenantId ?? issued.tenantId;
  if ((owner && passkey.tenantId !== owner) || (issued.tenantId && issued.tenantId !== passkey.tenantId)) {
    throw fail("invalid_credentials", "This passkey belongs to another account.");
  }
  let info: { newCounter: number };
  try {
    info = await checkSignature({ response, expectedChallenge: challenge, rp, publicKey: passkey.publicKey, counter: passkey.counter });
  } catch (e) {
    const message = (e as Error).message;
    if (/counter/i.test(message)) throw counterWentBack();
    throw fail("invalid_credentials", `The passkey response was refused: ${message.slice(0, 200)}`);
  }
  return { passkey, newCounter: info.newCounter };
}

/** checkAssertion, and the new counter stored: the passkey that signed. */
export async function verifyAssertion(core: Core, app: AppRow, raw: unknown, kind: AuthChallengeKind, tenantId?: string): Promise<PasskeyRow> {
  const { passkey, newCounter } = await checkAssertion(core, app, raw, kind, tenantId);
  if (!(await core.db.mfa.usePasskey(passkey.id, passkey.counter, newCounter, core.clock()))) throw counterWentBack();
  return passkey;
}

export const counterWentBack = () =>
  fail("invalid_credentials", "This passkey's signature counter did not move forward: the passkey may have been copied. Sign in another way, remove it and register it again.");

/** A passkey as the answer of a second-factor or re-authentication step, bound to its tenant. */
export function passkeyProof(core: Core, app: AppRow, raw: unknown, kind: AuthChallengeKind) {
  return async (tenantId: string): Promise<void> => {
    await verifyAssertion(core, app, raw, kind, tenantId);
  };
}
