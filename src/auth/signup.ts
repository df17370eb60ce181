import * as v from "valibot";
import { newId } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { EmailSchema, PasswordSchema } from "../admin/developers.ts";
import { newSession, tokenPair, type TokenPair } from "./sessions.ts";
import { prepareInviteClaim } from "../invites/claim.ts";
import { isUniqueViolation } from "../db/shared.ts";
import { accountKey, withLoginBackoff } from "./login-backoff.ts";

export const LOCALES = ["en", "es", "nl"] as const;
export type Locale = (typeof LOCALES)[number];
/** Any language tag is accepted; its primary subtag picks a supported locale, else English. */
export function toLocale(tag: string | undefined | null): Locale {
  const primary = (tag ?? "").trim().toLowerCase().split(/[-_]/)[0];
  return (LOCALES as readonly string[]).includes(primary!) ? (primary as Locale) : "en";
}

export const SignupBody = v.object({
  email: EmailSchema,
  password: PasswordSchema,
  locale: v.optional(v.pipe(v.string(), v.maxLength(35))),
  inviteToken: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
  sendEmail: v.optional(v.boolean()),
});
export type SignupInput = v.InferOutput<typeof SignupBody>;

/**
 * Creates a tenant and signs it in. An `inviteToken` (required in invite-only apps) is used
 * up in the same transaction; a family invite makes the tenant a member of the owner's
 * family. `only: "family"` accepts family invites alone (POST /auth/family-invite/consume).
 */
export async function signup(core: Core, app: AppRow, input: SignupInput, only?: "family"): Promise<{ tenant: TenantRow } & TokenPair> {
  if (app.settings.signupMode === "closed") throw fail("signup_disabled", "Sign-up is closed for this app.");
  // The invite first: without a valid one, an invite-only app does not say which emails exist.
  const claim = await prepareInviteClaim(core, app, input.inviteToken, only, input.email);
  if (await core.db.tenants.findByEmail(app.id, input.email)) throw fail("email_exists", "An account with this email already exists. Sign in instead.");
  // Hash before the transaction: never hold a write lock across the ~10 ms of argon2.
  const passwordHash = await core.passwords.hash(input.password);
  const now = core.clock();
  const tenant: TenantRow = {
    id: newId("tnt"),
    appId: app.id,
    email: input.email,
    passwordHash,
    emailVerifiedAt: null,
    locale: toLocale(input.locale),
    parentTenantId: claim?.parentTenantId ?? null,
    createdAt: now,
  };
  const { session, refreshToken } = newSession(now);
  try {
    await core.db.tenants.createWithSession(tenant, session, claim?.step);
  } catch (e) {
    if (isUniqueViolation(e)) throw fail("email_exists", "An account with this email already exists. Sign in instead.");
    throw e;
  }
  await core.hooks.emit("tenant.created", { app, tenant, inviteToken: input.inviteToken, sendEmail: input.sendEmail !== false && app.settings.email.sendEmail });
  return { tenant, ...(await tokenPair(core, tenant, session.id, refreshToken)) };
}

/**
 * Same answer and the same argon2 work for an unknown email as for a wrong password. Under
 * the account's sign-in backoff whoever calls it; `client` is the caller's address.
 */
export function login(core: Core, app: AppRow, email: string, password: string, client: string): Promise<TenantRow> {
  return withLoginBackoff(core, { account: accountKey("tenant", email, app.id), client }, async () => {
    const tenant = await core.db.tenants.findByEmail(app.id, email);
    const ok = tenant?.passwordHash ? await core.passwords.verify(tenant.passwordHash, password) : await core.passwords.verifyDummy(password);
    if (!tenant || !ok) throw fail("invalid_credentials", "Wrong email or password.");
    return tenant;
  });
}
