import type { AuditActor } from "../../audit/audit.ts";
import * as v from "valibot";
import { generateAuthenticationOptions, generateRegistrationOptions, verifyRegistrationResponse, type RegistrationResponseJSON } from "@simplewebauthn/server";
import type { Core } from "../../core.ts";
import type { AppRow, PasskeyRow, TenantRow } from "../../db/types.ts";
import { toIso } from "../../clock.ts";
import { newId } from "../../crypto/random.ts";
import { hmacSha256 } from "../../crypto/hmac.ts";
import { fail } from "../../errors.ts";
import { parseInput } from "../../http/body.ts";
import { isUniqueViolation } from "../../db/shared.ts";
import { relyingParty } from "./relying-party.ts";
import { consumeChallenge, newChallenge, PASSKEY_CHALLENGE_TTL_SECONDS, signedChallenge } from "./challenges.ts";
import { checkAssertion, counterWentBack } from "./proof.ts";
import { securityEvent } from "../security-events.ts";
import type { SignInOutcome } from "../sign-in-finish.ts";
import { newSession, signInDisabled, tokenPair } from "../sessions.ts";
import { readTicket } from "../mfa/ticket.ts";

/** Passkeys one tenant may hold: enough for every device, bounded for the options list. */
export const MAX_PASSKEYS = 20;

const b64url = v.pipe(v.string(), v.maxLength(65_536), v.regex(/^[A-Za-z0-9_-]*$/, "must be base64url"));
export const AttestationSchema = v.object({
  id: b64url,
  rawId: b64url,
  type: v.literal("public-key", 'must be "public-key"'),
  response: v.object({
    clientDataJSON: b64url,
    attestationObject: b64url,
    transports: v.optional(v.array(v.pipe(v.string(), v.maxLength(32))), []),
    authenticatorData: v.optional(b64url),
    publicKey: v.optional(b64url),
    publicKeyAlgorithm: v.optional(v.number()),
  }),
  clientExtensionResults: v.optional(v.record(v.string(), v.unknown()), {}),
  authenticatorAttachment: v.optional(v.nullable(v.string())),
});

export const toPublicPasskey = (p: PasskeyRow) => ({ id: p.id, name: p.name, createdAt: toIso(p.createdAt)!, lastUsedAt: toIso(p.lastUsedAt) });

const timeout = PASSKEY_CHALLENGE_TTL_SECONDS * 1000;

/** Options for `navigator.credentials.create()`: a discoverable credential, user verification required, no attestation. */
export async function registrationOptions(core: Core, app: AppRow, tenant: TenantRow) {
  const rp = relyingParty(app);
  const existing = await core.db.mfa.passkeys(app.id, tenant.id);
  if (existing.length >= MAX_PASSKEYS) throw fail("limit_reached", `An account holds at most ${MAX_PASSKEYS} passkeys: remove one first.`);
  const challenge = await newChallenge(core, app, "passkey_register", tenant.id);
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userID: Buffer.from(tenant.id),
    userName: tenant.email,
    // As bytes: a string would be taken as text and encoded again.
    challenge: Buffer.from(challenge, "base64url"),
    timeout,
    attestationType: "none",
    excludeCredentials: existing.map((p) => ({ id: p.credentialId, transports: p.transports ? (JSON.parse(p.transports) as string[]) : undefined })),
    authenticatorSelection: { residentKey: "required", userVerification: "required" },
  });
}

/** Verifies `navigator.credentials.create()`'s answer and stores the passkey. */
export async function registerPasskey(core: Core, app: AppRow, tenantId: string, raw: unknown, name: string | undefined): Promise<PasskeyRow> {
  const rp = relyingParty(app);
  const response = parseInput(AttestationSchema, raw, "credential") as RegistrationResponseJSON;
  const challenge = signedChallenge(response.response.clientDataJSON);
  const issued = await consumeChallenge(core, app, "passkey_register", challenge);
  if (issued.tenantId !== tenantId) throw fail("invalid_token", "This passkey challenge was issued to another account. Ask for new options and try again.");
  let credential;
  try {
    const result = await verifyRegistrationResponse({ response, expectedChallenge: challenge, expectedOrigin: rp.origins, expectedRPID: rp.id, requireUserVerification: true });
    if (!result.verified) throw new Error("the attestation does not verify");
    credential = result.registrationInfo.credential;
  } catch (e) {
    throw fail("invalid_request", `The passkey registration was refused: ${(e as Error).message.slice(0, 200)}`);
  }
  const now = core.clock();
  const count = (await core.db.mfa.passkeys(app.id, tenantId)).length;
  const row: PasskeyRow = {
    id: newId("pk"),
    appId: app.id,
    tenantId,
    credentialId: credential.id,
    publicKey: Buffer.from(credential.publicKey).toString("base64url"),
    counter: credential.counter,
    transports: credential.transports?.length ? JSON.stringify(credential.transports) : null,
    name: name ?? `Passkey ${count + 1}`,
    createdAt: now,
    lastUsedAt: null,
  };
  try {
    await core.db.mfa.insertPasskey(row);
  } catch (e) {
    if (isUniqueViolation(e)) throw fail("conflict", "This passkey is already registered with this app.");
    throw e;
  }
  // A passkey is a way back in for an anonymous tenant: it is kept, no longer cleaned up as idle.
  // After the insert, so a refused passkey never leaves it stranded off the list.
  await core.db.signIn.keepAnonymous(app.id, tenantId);
  await securityEvent(core, app, tenantId, "passkey.added", { passkeyId: row.id, name: row.name });
  return row;
}

export async function renamePasskey(core: Core, app: AppRow, tenantId: string, id: string, name: string): Promise<PasskeyRow> {
  if (!(await core.db.mfa.renamePasskey(app.id, tenantId, id, name))) throw fail("not_found", "No such passkey on this account.");
  return (await core.db.mfa.passkeys(app.id, tenantId)).find((p) => p.id === id)!;
}

export async function removePasskey(core: Core, app: AppRow, tenantId: string, id: string, actor?: AuditActor): Promise<void> {
  const passkey = (await core.db.mfa.passkeys(app.id, tenantId)).find((p) => p.id === id);
  if (!passkey || !(await core.db.mfa.removePasskey(app.id, tenantId, id))) throw fail("not_found", "No such passkey on this account.");
  await securityEvent(core, app, tenantId, "passkey.removed", { passkeyId: id, name: passkey.name }, actor);
}

const decoys = new WeakMap<Core, ReturnType<typeof hmacSha256>>();

/**
 * The credential ids offered for an email. An unknown email is offered one id derived from
 * the email under a server key, the same every time: the options do not tell which emails
 * have an account.
 */
async function credentialsFor(core: Core, app: AppRow, email: string): Promise<{ id: string }[]> {
  const tenant = await core.db.tenants.findByEmail(app.id, email);
  if (tenant) {
    const passkeys = await core.db.mfa.passkeys(app.id, tenant.id);
    if (passkeys.length) return passkeys.map((p) => ({ id: p.credentialId }));
  }
  let mac = decoys.get(core);
  if (!mac) decoys.set(core, (mac = hmacSha256(core.secrets.deriveKey("passkey-decoy"))));
  return [{ id: mac(`${app.id}|${email}`, "base64url") }];
}

export type OptionsInput = { purpose: "sign_in"; email?: string; mfaTicket?: string } | { purpose: "reauthenticate"; tenantId: string };

/**
 * Options for `navigator.credentials.get()`. Without an email the browser offers the
 * passkeys it holds for the RP (discoverable); with one, that account's; with an MFA ticket,
 * the ticket's account's (a passkey as the second factor); for re-authentication, the
 * signed-in tenant's.
 */
export async function authenticationOptions(core: Core, app: AppRow, input: OptionsInput) {
  const rp = relyingParty(app);
  let tenantId: string | null = null;
  let allow: { id: string }[] | undefined;
  if (input.purpose === "reauthenticate") tenantId = input.tenantId;
  else if (input.mfaTicket) tenantId = (await readTicket(core, app, input.mfaTicket)).tenantId;
  else if (input.email) allow = await credentialsFor(core, app, input.email);
  if (tenantId) allow = (await core.db.mfa.passkeys(app.id, tenantId)).map((p) => ({ id: p.credentialId }));
  if (tenantId && allow?.length === 0) throw fail("invalid_request", "This account has no passkey: use another method.");
  const challenge = await newChallenge(core, app, input.purpose === "reauthenticate" ? "passkey_reauth" : "passkey_sign_in", tenantId);
  return generateAuthenticationOptions({ rpID: rp.id, challenge: Buffer.from(challenge, "base64url"), timeout, userVerification: "required", allowCredentials: allow });
}

/**
 * Signs in with a passkey (first factor; user verification makes it two factors, so no MFA
 * ticket: finishSignIn's `strong`). The counter and the session are written together.
 */
export async function passkeySignIn(core: Core, app: AppRow, raw: unknown): Promise<SignInOutcome> {
  const { passkey, newCounter } = await checkAssertion(core, app, raw, "passkey_sign_in");
  const tenant = await core.db.tenants.findById(app.id, passkey.tenantId);
  if (!tenant) throw fail("invalid_credentials", "This passkey's account no longer exists.");
  const { session, refreshToken } = newSession(core.clock(), "passkey");
  const use = { passkeyId: passkey.id, oldCounter: passkey.counter, newCounter, at: session.createdAt };
  const outcome = await core.db.signIn.passkeySession(use, tenant.id, app.id, session);
  if (outcome === "counter") throw counterWentBack();
  if (outcome === "disabled") throw signInDisabled();
  return { tenant, method: "passkey", tokens: await tokenPair(core, tenant, session.id, refreshToken) };
}
