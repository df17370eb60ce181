import * as v from "valibot";
import type { ErrorCode } from "../errors.ts";
import type { Operation } from "./operations.ts";
import { AuthReply, Tenant } from "./schemas.ts";
import { AnonymousBody, UpgradeBody } from "../auth/anonymous.ts";
import { EmailSignInBody, EmailSignInVerifyBody } from "../auth/email-code/sign-in.ts";

// Issue 42 part B: the operations of the sign-in methods and signing keys.
const obj = v.strictObject;
const iso = v.pipe(v.string(), v.isoTimestamp());
const base = "/api/v1";
const appAdmin = `${base}/admin/apps/:appId`;

const Jwk = obj({ kty: v.literal("OKP"), crv: v.literal("Ed25519"), alg: v.literal("EdDSA"), use: v.literal("sig"), kid: v.string(), x: v.string() });
const SigningKey = obj({ kid: v.string(), current: v.boolean(), createdAt: iso, retiredAt: v.nullable(iso), verifiesUntil: v.nullable(iso), published: v.boolean() });

const RATE: ErrorCode[] = ["rate_limited"];

export const SIGN_IN_OPERATIONS: Operation[] = [
  { method: "POST", path: `${base}/auth/anonymous`, tag: "auth", summary: "Sign in as a new anonymous tenant (no email), to upgrade later", security: "appKey", body: AnonymousBody,
    responses: { 201: obj({ ...AuthReply.entries, anonymous: v.literal(true) }) }, errors: ["forbidden", "signup_disabled", "invite_required", ...RATE],
    description: "`forbidden` while the app setting `auth.anonymous` is off." },
  { method: "POST", path: `${base}/auth/anonymous/upgrade`, tag: "auth", summary: "Give the anonymous tenant an email and a password, keeping its id and data", security: "tenant", body: UpgradeBody,
    responses: { 200: obj({ tenant: Tenant }) }, errors: ["conflict", "email_exists", ...RATE] },
  { method: "POST", path: `${base}/auth/anonymous/upgrade-token`, tag: "auth", summary: "A 15-minute token for GET /auth/oauth/{provider}?upgradeToken= (upgrade by social login)", security: "tenant",
    responses: { 200: obj({ upgradeToken: v.string(), expiresIn: v.number() }) }, errors: ["conflict"] },
  { method: "POST", path: `${base}/auth/email-sign-in`, tag: "auth", summary: "Email a 6-digit sign-in code (and a link to the app's page)", security: "appKey", body: EmailSignInBody,
    responses: { 202: obj({ ok: v.literal(true), expiresIn: v.number() }) }, errors: ["forbidden", "invalid_redirect", ...RATE],
    description: "The same answer whether or not the address has an account. `forbidden` while the app setting `auth.emailSignIn` is off." },
  { method: "POST", path: `${base}/auth/email-sign-in/verify`, tag: "auth", summary: "Sign in (or up) with the emailed code or the link's token", security: "appKey", body: EmailSignInVerifyBody,
    responses: { 200: AuthReply }, errors: ["forbidden", "invalid_credentials", "invalid_token", "signup_disabled", ...RATE] },
  { method: "GET", path: `${base}/apps/:appId/.well-known/jwks.json`, tag: "auth", summary: "The app's public keys of its access tokens (JWKS), to verify them offline", security: "none", responses: { 200: obj({ keys: v.array(Jwk) }) }, errors: ["not_found"] },
  { method: "GET", path: `${appAdmin}/signing-keys`, tag: "admin", summary: "The app's access-token signing keys (no private part)", security: "developer", responses: { 200: obj({ keys: v.array(SigningKey) }) } },
  { method: "POST", path: `${appAdmin}/signing-keys/rotate`, tag: "admin", summary: "Sign access tokens with a new key; the previous one verifies until its tokens expired", security: "developer",
    responses: { 200: obj({ kid: v.string(), previousKid: v.nullable(v.string()), previousVerifiesUntil: v.nullable(iso) }) } },
];
