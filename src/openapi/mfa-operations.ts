import * as v from "valibot";
import type { ErrorCode } from "../errors.ts";
import type { Operation } from "./operations.ts";
import * as mfa from "../auth/mfa/routes.ts";
import * as passkeys from "../auth/passkeys/routes.ts";
import { AuthReply, Ok, Tenant, TokenPair } from "./schemas.ts";

const obj = v.strictObject;
const iso = v.pipe(v.string(), v.isoTimestamp());
const base = "/api/v1";
const RATE: ErrorCode[] = ["rate_limited"];
const STEP_UP: ErrorCode[] = ["reauthentication_required"];

export const MfaChallenge = obj({
  mfaRequired: v.literal(true),
  mfaTicket: v.string(),
  methods: v.array(v.picklist(["totp", "recovery_code", "passkey"])),
  enrollmentRequired: v.boolean(),
  /** seconds */
  expiresIn: v.number(),
});
/** A sign-in: the tenant and its tokens, or the MFA step. */
export const SignInReply = v.union([AuthReply, MfaChallenge]);
export const MfaStatus = obj({ enabled: v.boolean(), totp: v.boolean(), passkeys: v.number(), recoveryCodesLeft: v.number(), required: v.boolean() });
export const TotpEnrolment = obj({ secret: v.string(), uri: v.string(), period: v.number(), digits: v.number() });
export const RecoveryCodes = obj({ recoveryCodes: v.array(v.string()) });
export const TotpConfirmReply = v.union([RecoveryCodes, obj({ recoveryCodes: v.array(v.string()), tenant: Tenant, ...TokenPair.entries })]);
export const Reauthenticated = obj({ ok: v.literal(true), authenticatedAt: iso, stepUpSeconds: v.number() });
export const Passkey = obj({ id: v.string(), name: v.string(), createdAt: iso, lastUsedAt: v.nullable(iso) });
export const PasskeyReply = obj({ passkey: Passkey });
export const PasskeyList = obj({ passkeys: v.array(Passkey) });
/** WebAuthn's own option dictionaries (PublicKeyCredentialCreationOptionsJSON / RequestOptionsJSON): handed to the browser as they are. */
export const CreationOptions = v.looseObject({ challenge: v.string(), rp: v.looseObject({ id: v.optional(v.string()), name: v.string() }), user: v.looseObject({ id: v.string() }) });
export const RequestOptions = v.looseObject({ challenge: v.string(), rpId: v.optional(v.string()) });

export const SignInMethods = obj({
  password: v.boolean(),
  /** signed in with POST /api/v1/auth/anonymous and not upgraded yet */
  anonymous: v.boolean(),
  totp: v.boolean(),
  recoveryCodesLeft: v.number(),
  passkeys: v.array(Passkey),
  providers: v.array(obj({ provider: v.string(), linkedAt: iso, email: v.nullable(v.string()) })),
});
const tenantAdmin = `${base}/admin/apps/:appId/tenants/:tenantId`;

export const STEP_UP_NOTE = "Needs a sign-in within `settings.auth.stepUpSeconds` (default 600): otherwise `403 reauthentication_required`; see `POST /api/v1/auth/reauthenticate`.";

export const MFA_OPERATIONS: Operation[] = [
  { method: "GET", path: `${base}/auth/mfa`, tag: "mfa", summary: "The tenant's second factors", security: "tenant", responses: { 200: MfaStatus } },
  { method: "POST", path: `${base}/auth/mfa/totp`, tag: "mfa", summary: "Start TOTP enrolment: a secret and an otpauth:// URI", security: "tenant", body: mfa.MfaTicketBody, responses: { 200: TotpEnrolment }, errors: ["conflict", "invalid_token"],
    description: "With the bearer; or, when the app requires MFA and login answered `enrollmentRequired`, with the app key and `{ mfaTicket }`. Active only once confirmed." },
  { method: "POST", path: `${base}/auth/mfa/totp/confirm`, tag: "mfa", summary: "Confirm TOTP with a first code: MFA is on; the 10 recovery codes, shown once", security: "tenant", body: mfa.TotpConfirmBody, responses: { 200: TotpConfirmReply },
    errors: ["invalid_credentials", "conflict", "invalid_token", ...RATE], description: "With `mfaTicket` (enrolment-only ticket, app key) the reply also signs the tenant in." },
  { method: "DELETE", path: `${base}/auth/mfa/totp`, tag: "mfa", summary: "Turn TOTP off (drops the recovery codes)", security: "tenant", responses: { 204: "empty" }, errors: ["not_found", ...STEP_UP], description: STEP_UP_NOTE },
  { method: "POST", path: `${base}/auth/mfa/recovery-codes`, tag: "mfa", summary: "Replace the recovery codes", security: "tenant", body: mfa.EmptyBody, responses: { 200: RecoveryCodes }, errors: STEP_UP, description: STEP_UP_NOTE },
  { method: "POST", path: `${base}/auth/mfa/verify`, tag: "mfa", summary: "Answer an MFA ticket with a TOTP code, a recovery code or a passkey", security: "appKey", body: mfa.MfaVerifyBody, responses: { 200: AuthReply },
    errors: ["invalid_token", "invalid_credentials", ...RATE], description: "The ticket is single-use, lasts 5 minutes and takes 5 wrong codes; wrong codes also count toward the account's backoff (429 with `retry-after`)." },
  { method: "POST", path: `${base}/auth/reauthenticate`, tag: "mfa", summary: "Prove it is you again: restarts the session's step-up window", security: "tenant", body: mfa.ReauthenticateBody, responses: { 200: Reauthenticated },
    errors: ["invalid_credentials", "invalid_token", ...RATE], description: "Exactly one of `password`, `code` (TOTP), `recoveryCode` or `passkey` (answering `POST /auth/passkeys/options` with `purpose: \"reauthenticate\"`)." },
  { method: "POST", path: `${base}/auth/change-password`, tag: "mfa", summary: "Set a new password; the tenant's other sessions end", security: "tenant", body: mfa.ChangePasswordBody, responses: { 200: Ok }, errors: STEP_UP, description: STEP_UP_NOTE },

  { method: "POST", path: `${base}/auth/passkeys/register/options`, tag: "passkeys", summary: "Options for navigator.credentials.create()", security: "tenant", body: mfa.EmptyBody, responses: { 200: CreationOptions }, errors: ["forbidden", "limit_reached"] },
  { method: "POST", path: `${base}/auth/passkeys/register`, tag: "passkeys", summary: "Register the created passkey", security: "tenant", body: passkeys.PasskeyRegisterBody, responses: { 201: PasskeyReply }, errors: ["forbidden", "invalid_token", "conflict", ...RATE] },
  { method: "GET", path: `${base}/auth/passkeys`, tag: "passkeys", summary: "The tenant's passkeys", security: "tenant", responses: { 200: PasskeyList } },
  { method: "PATCH", path: `${base}/auth/passkeys/:id`, tag: "passkeys", summary: "Rename a passkey", security: "tenant", body: passkeys.PasskeyRenameBody, responses: { 200: PasskeyReply }, errors: ["not_found"] },
  { method: "DELETE", path: `${base}/auth/passkeys/:id`, tag: "passkeys", summary: "Remove a passkey", security: "tenant", responses: { 204: "empty" }, errors: ["not_found", ...STEP_UP], description: STEP_UP_NOTE },
  { method: "POST", path: `${base}/auth/passkeys/options`, tag: "passkeys", summary: "Options for navigator.credentials.get(): sign-in, second factor or re-authentication", security: "appKey", body: passkeys.PasskeyOptionsBody, responses: { 200: RequestOptions },
    errors: ["forbidden", "invalid_token", "invalid_access_token", "token_expired", "session_ended", ...RATE],
    description: "No email: a discoverable credential. `email`: that account's passkeys. `mfaTicket`: the ticket's account (a passkey as second factor). `purpose: \"reauthenticate\"` also needs the tenant's bearer." },
  { method: "POST", path: `${base}/auth/passkeys/sign-in`, tag: "passkeys", summary: "Sign in with a passkey", security: "appKey", body: passkeys.PasskeySignInBody, responses: { 200: SignInReply }, errors: ["invalid_token", "invalid_credentials", "forbidden", ...RATE],
    description: "A passkey checked with user verification is two factors: the reply is the tenant and its tokens." },

  { method: "GET", path: `${tenantAdmin}/sign-in-methods`, tag: "admin", summary: "A tenant's sign-in methods: password, TOTP, passkeys, social accounts", security: "developer", responses: { 200: SignInMethods } },
  { method: "DELETE", path: `${tenantAdmin}/mfa`, tag: "admin", summary: "Reset the tenant's two-factor authentication (TOTP and recovery codes); the tenant is emailed", security: "developer", responses: { 204: "empty" }, errors: ["not_found"] },
  { method: "DELETE", path: `${tenantAdmin}/passkeys/:passkeyId`, tag: "admin", summary: "Remove one of the tenant's passkeys; the tenant is emailed", security: "developer", responses: { 204: "empty" }, errors: ["not_found"] },
];
