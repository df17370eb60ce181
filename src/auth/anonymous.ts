import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { newId } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { EmailSchema, PasswordSchema } from "../admin/developers.ts";
import { isUniqueViolation } from "../db/shared.ts";
import { deleteTenant } from "../account/delete.ts";
import { startSession, type TokenPair } from "./sessions.ts";
import { finishSignIn, type SignInOutcome } from "./sign-in-finish.ts";
import { toLocale } from "./signup.ts";
import { resendVerification } from "./verify-email.ts";
import { hmacSha256 } from "../crypto/hmac.ts";
import { constantTimeEqual } from "../crypto/random.ts";
import type { OAuthProviderName } from "../apps/settings.ts";
import type { Identity } from "../oauth/identity.ts";
import { placeholderEmail } from "../oauth/sign-in.ts";

const DAY_MS = 24 * 3600 * 1000;
/** Tenants deleted per maintenance round at most: a backlog clears over a few hours, never in one burst. */
const CLEANUP_BATCH = 500;

export const AnonymousBody = v.strictObject({ locale: v.optional(v.pipe(v.string(), v.maxLength(35))) });
export const UpgradeBody = v.strictObject({ email: EmailSchema, password: PasswordSchema, locale: v.optional(v.pipe(v.string(), v.maxLength(35))) });

/** An anonymous tenant's stand-in address: `.invalid` never delivers, and it names no one. */
export const anonymousEmail = (tenantId: string) => `${tenantId}@anonymous.invalid`;

/** A tenant without an email, for an app that allows them; it holds records and files like any other. */
export async function signInAnonymously(core: Core, app: AppRow, locale: string | undefined): Promise<{ tenant: TenantRow } & TokenPair> {
  if (!app.settings.auth.anonymous) throw fail("forbidden", "Anonymous sign-in is not enabled for this app: the developer turns it on with the setting auth.anonymous.");
  if (app.settings.signupMode === "closed") throw fail("signup_disabled", "Sign-up is closed for this app.");
  if (app.settings.signupMode === "invite_only") throw fail("invite_required", "This app is invite-only: anonymous tenants could not be invited.");
  const now = core.clock();
  const id = newId("tnt");
  const tenant: TenantRow = { id, appId: app.id, email: anonymousEmail(id), passwordHash: null, emailVerifiedAt: null, locale: toLocale(locale), parentTenantId: null, createdAt: now };
  await core.db.signIn.createTenant(tenant, true);
  await core.hooks.emit("tenant.created", { app, tenant, sendEmail: false });
  // A new account: tokens, as at sign-up (no second factor can exist yet).
  return { tenant, ...(await startSession(core, tenant, "anonymous")) };
}

/**
 * Gives an anonymous tenant an email and a password: same id, same records and files, same
 * session. The address gets a verification email, as at sign-up.
 */
export async function upgradeWithPassword(core: Core, app: AppRow, tenantId: string, input: v.InferOutput<typeof UpgradeBody>): Promise<TenantRow> {
  if (!(await core.db.signIn.isAnonymous(app.id, tenantId))) throw fail("conflict", "This account already has an email: it is not anonymous.");
  if (await core.db.tenants.findByEmail(app.id, input.email)) throw fail("email_exists", "An account with this email already exists. Sign in to it instead.");
  const passwordHash = await core.passwords.hash(input.password);
  try {
    if (!(await core.db.signIn.upgradeAnonymous(app.id, tenantId, input.email, passwordHash, null))) {
      throw fail("conflict", "This account already has an email: it is not anonymous.");
    }
  } catch (e) {
    if (isUniqueViolation(e)) throw fail("email_exists", "An account with this email already exists. Sign in to it instead.");
    throw e;
  }
  const tenant = (await core.db.tenants.findById(app.id, tenantId))!;
  if (app.settings.email.sendEmail) await resendVerification(core, app, tenant, input.locale);
  return tenant;
}

/** An upgrade token lasts as long as a social sign-in may take (its state lives 10 minutes) and a little more. */
export const UPGRADE_TOKEN_TTL_SECONDS = 15 * 60;
const UPGRADE_PREFIX = "aup_";
const upgradeMacs = new WeakMap<Core, ReturnType<typeof hmacSha256>>();
const upgradeMac = (core: Core) => {
  let mac = upgradeMacs.get(core);
  if (!mac) upgradeMacs.set(core, (mac = hmacSha256(core.secrets.deriveKey("anonymous-upgrade"))));
  return mac;
};

/**
 * A short-lived token naming the anonymous tenant, for the social sign-in that upgrades it
 * (GET /auth/oauth/:provider?upgradeToken=): a browser redirect carries no bearer. Signed,
 * not stored; it travels sealed in the flow's state row.
 */
export async function issueUpgradeToken(core: Core, app: AppRow, tenantId: string): Promise<{ upgradeToken: string; expiresIn: number }> {
  if (!(await core.db.signIn.isAnonymous(app.id, tenantId))) throw fail("conflict", "This account already has an email: it is not anonymous.");
  const exp = Math.floor(core.clock() / 1000) + UPGRADE_TOKEN_TTL_SECONDS;
  const body = Buffer.from(JSON.stringify({ a: app.id, t: tenantId, e: exp })).toString("base64url");
  return { upgradeToken: `${UPGRADE_PREFIX}${body}.${upgradeMac(core)(body, "base64url")}`, expiresIn: UPGRADE_TOKEN_TTL_SECONDS };
}

export const isUpgradeToken = (token: string) => token.startsWith(UPGRADE_PREFIX);

/** The anonymous tenant an upgrade token names, or invalid_token. */
export function readUpgradeToken(core: Core, app: AppRow, token: string): string {
  const [body, sig] = token.slice(UPGRADE_PREFIX.length).split(".");
  let claims: { a?: unknown; t?: unknown; e?: unknown } = {};
  if (body && sig && constantTimeEqual(sig, upgradeMac(core)(body, "base64url"))) {
    try {
      claims = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as typeof claims;
    } catch {
      claims = {};
    }
  }
  if (claims.a !== app.id || typeof claims.t !== "string" || typeof claims.e !== "number") throw fail("invalid_token", "This upgrade token is not valid for this app.");
  if (claims.e * 1000 <= core.clock()) throw fail("invalid_token", "This upgrade token expired: ask for a new one (POST /api/v1/auth/anonymous/upgrade-token).");
  return claims.t;
}

/**
 * Links the provider account to the anonymous tenant named by the upgrade token: same id
 * and data. Its email becomes the provider's when vouched for and free. A provider account
 * already signed up is refused: its tenant would be left behind or merged.
 */
export async function upgradeWithProvider(core: Core, app: AppRow, provider: OAuthProviderName, identity: Identity, token: string): Promise<SignInOutcome> {
  const tenantId = readUpgradeToken(core, app, token);
  if (await core.db.oauth.findTenant(app.id, provider, identity.id)) {
    throw fail("conflict", `This ${provider} account already has an account here: sign in with it instead of upgrading.`);
  }
  const now = core.clock();
  const vouched = identity.email !== null && identity.emailVerified && !(await core.db.tenants.findByEmail(app.id, identity.email));
  const email = vouched ? identity.email! : placeholderEmail(provider, identity.id);
  const link = { appId: app.id, provider, providerAccountId: identity.id, email: identity.email, emailVerified: identity.emailVerified, at: now };
  try {
    if (!(await core.db.signIn.upgradeAnonymous(app.id, tenantId, email, null, vouched ? now : null, link))) {
      throw fail("conflict", "This account already has an email: it is not anonymous.");
    }
  } catch (e) {
    if (isUniqueViolation(e)) throw fail("conflict", `This ${provider} account or email already has an account here: sign in with it instead.`);
    throw e;
  }
  const tenant = (await core.db.tenants.findById(app.id, tenantId))!;
  return finishSignIn(core, app, tenant, `oauth:${provider}`);
}

/**
 * Deletes anonymous tenants idle for their app's `auth.anonymousIdleDays` (no sign-in or
 * refresh since), with their data, as an account deletion does. Part of the maintenance round.
 */
export async function cleanUpAnonymous(core: Core): Promise<number> {
  const now = core.clock();
  let deleted = 0;
  for (const app of await core.db.apps.list()) {
    const idle = await core.db.signIn.idleAnonymous(app.id, now - app.settings.auth.anonymousIdleDays * DAY_MS, CLEANUP_BATCH);
    for (const tenantId of idle) {
      try {
        await deleteTenant(core, app, tenantId, "anonymous_idle");
        deleted++;
      } catch (e) {
        core.log.warn("anonymous tenant cleanup failed", { appId: app.id, tenantId, error: e instanceof Error ? e.message : String(e) });
      }
    }
  }
  return deleted;
}
