import { createHash, createPublicKey, verify, type KeyObject } from "node:crypto";
import { verifyAuthenticationResponse, type AuthenticationResponseJSON } from "@simplewebauthn/server";
import { decodeClientDataJSON, decodeCredentialPublicKey, isoBase64URL, parseAuthenticatorData } from "@simplewebauthn/server/helpers";
import type { RelyingParty } from "./relying-party.ts";

export interface AssertionCheck {
  response: AuthenticationResponseJSON;
  expectedChallenge: string;
  rp: RelyingParty;
  /** the stored COSE public key, base64url, and the counter last seen */
  publicKey: string;
  counter: number;
}

/** COSE: kty 1, alg 3, crv -1, x -2, y -3; EC2 = 2, ES256 = -7, P-256 = 1. */
const EC2 = 2;
const ES256 = -7;
const P256 = 1;

/**
 * Public keys already turned into KeyObjects, by their stored COSE text. Keyed by the key
 * itself, not by the credential id, so there is nothing to invalidate: a removed or
 * re-registered passkey is found (or not) in the database first, and a cached key only ever
 * checks signatures for the exact key it was built from. Bounded: the oldest go first.
 */
const keys = new Map<string, KeyObject | null>();
const MAX_KEYS = 10_000;

/** The key as a KeyObject when it is ES256 on P-256 (what platform authenticators make); null otherwise. */
function es256Key(publicKey: string): KeyObject | null {
  let key = keys.get(publicKey);
  if (key !== undefined) return key;
  key = null;
  try {
    const cose = decodeCredentialPublicKey(Buffer.from(publicKey, "base64url")) as unknown as Map<number, unknown>;
    const x = cose.get(-2);
    const y = cose.get(-3);
    if (cose.get(1) === EC2 && cose.get(3) === ES256 && cose.get(-1) === P256 && x instanceof Uint8Array && y instanceof Uint8Array && x.length === 32 && y.length === 32) {
      key = createPublicKey({ key: { kty: "EC", crv: "P-256", x: Buffer.from(x).toString("base64url"), y: Buffer.from(y).toString("base64url") }, format: "jwk" });
    }
  } catch {
    // Not one this path knows: the library checks it.
  }
  if (keys.size >= MAX_KEYS) keys.delete(keys.keys().next().value!);
  keys.set(publicKey, key);
  return key;
}

const rpHashes = new Map<string, Buffer>();
const rpIdHash = (id: string) => {
  let h = rpHashes.get(id);
  if (!h) {
    if (rpHashes.size > 1_000) rpHashes.clear();
    rpHashes.set(id, (h = createHash("sha256").update(id).digest()));
  }
  return h;
};

/**
 * Checks an assertion as @simplewebauthn/server's verifyAuthenticationResponse does, step for
 * step and with its messages, and returns the new counter; throws when refused. For an ES256
 * key (nearly every passkey) the signature is checked here with a KeyObject built once per
 * key and node:crypto's one-shot verify: the library re-decodes the key, imports it into
 * WebCrypto and hashes through WebCrypto's thread pool on every sign-in, which was most of a
 * passkey sign-in's CPU (bench/NOTES.md). Every other key type goes through the library.
 */
export async function checkSignature(c: AssertionCheck): Promise<{ newCounter: number }> {
  const key = es256Key(c.publicKey);
  if (!key) {
    const result = await verifyAuthenticationResponse({
      response: c.response,
      expectedChallenge: c.expectedChallenge,
      expectedOrigin: c.rp.origins,
      expectedRPID: c.rp.id,
      credential: { id: c.response.id, publicKey: Buffer.from(c.publicKey, "base64url"), counter: c.counter },
      requireUserVerification: true,
    });
    if (!result.verified) throw new Error("the signature does not verify");
    return result.authenticationInfo;
  }
  const { id, rawId, type: credentialType, response } = c.response;
  if (!id) throw new Error("Missing credential ID");
  if (id !== rawId) throw new Error("Credential ID was not base64url-encoded");
  if (credentialType !== "public-key") throw new Error(`Unexpected credential type ${credentialType}, expected "public-key"`);
  if (typeof response?.clientDataJSON !== "string") throw new Error("Credential response clientDataJSON was not a string");
  const clientData = decodeClientDataJSON(response.clientDataJSON);
  const { type, origin, challenge, tokenBinding, topOrigin } = clientData;
  if (type !== "webauthn.get") throw new Error(`Unexpected authentication response type: ${type}`);
  if (challenge !== c.expectedChallenge) throw new Error(`Unexpected authentication response challenge "${challenge}", expected "${c.expectedChallenge}"`);
  // No top origin is expected: a cross-origin iframe naming one is refused, as the library
  // does without `expectedTopOrigin`; a top origin outside a cross-origin frame never fits.
  if (topOrigin) throw new Error(`Unexpected top origin "${topOrigin}"`);
  if (!c.rp.origins.includes(origin)) throw new Error(`Unexpected authentication response origin "${origin}", expected one of: ${c.rp.origins.join(", ")}`);
  if (!isoBase64URL.isBase64URL(response.authenticatorData)) throw new Error("Credential response authenticatorData was not a base64url string");
  if (!isoBase64URL.isBase64URL(response.signature)) throw new Error("Credential response signature was not a base64url string");
  if (response.userHandle && typeof response.userHandle !== "string") throw new Error("Credential response userHandle was not a string");
  if (tokenBinding) {
    if (typeof tokenBinding !== "object") throw new Error("ClientDataJSON tokenBinding was not an object");
    if (!["present", "supported", "notSupported"].includes(tokenBinding.status)) throw new Error(`Unexpected tokenBinding status ${tokenBinding.status}`);
  }
  const authData = Buffer.from(response.authenticatorData, "base64url");
  const { rpIdHash: sentRpIdHash, flags, counter } = parseAuthenticatorData(authData);
  if (!rpIdHash(c.rp.id).equals(sentRpIdHash)) throw new Error("Unexpected RP ID hash");
  if (!flags.up) throw new Error("User not present during authentication");
  if (!flags.uv) throw new Error("User verification required, but user could not be verified");
  if ((counter > 0 || c.counter > 0) && counter <= c.counter) throw new Error(`Response counter value ${counter} was lower than expected ${c.counter}`);
  const clientDataHash = createHash("sha256").update(Buffer.from(response.clientDataJSON, "base64url")).digest();
  // WebAuthn's ES256 signatures are DER, node:crypto's default encoding for ECDSA.
  let verified = false;
  try {
    verified = verify("sha256", Buffer.concat([authData, clientDataHash]), key, Buffer.from(response.signature, "base64url"));
  } catch {
    // a signature that is not DER: refused below
  }
  if (!verified) throw new Error("the signature does not verify");
  return { newCounter: counter };
}
