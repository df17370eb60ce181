import type { Core } from "../core.ts";
import type { AppRow, TenantRow, OAuthLink } from "../db/types.ts";
import type { OAuthProviderName } from "../apps/settings.ts";
import { hashToken, newId } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { newSession, tokenPair } from "../auth/sessions.ts";
import { finishSignIn, type SignInOutcome } from "../auth/sign-in-finish.ts";
import { securityEvent } from "../auth/security-events.ts";
import type { Identity } from "./identity.ts";
import { checkSignupInvite } from "./invite-hook.ts";
import { isUniqueViolation } from "../db/shared.ts";

/** Stands in for the email of an account whose provider shares none; `.invalid` never delivers. */
export function placeholderEmail(provider: OAuthProviderName, id: string): string {
  const local = /^[a-z0-9._-]{1,64}$/.test(id) ? id : hashToken(id).slice(0, 32);
  return `${provider}-${local}@oauth.invalid`;
}

/**
 * Finds the tenant by provider account, else links the tenant with the same verified email,
 * else signs up a new one. An email the provider does not vouch for is never a match key nor
 * the new tenant's address: whoever typed someone else's address at the provider would
 * otherwise own that person's account before (or after) they sign up. A concurrent sign-in of the same account loses the insert race
 * and retries once, finding the winner's link.
 */
export async function signIn(core: Core, app: AppRow, provider: OAuthProviderName, identity: Identity, inviteToken: string | null, retry = true): Promise<SignInOutcome> {
  const link: OAuthLink = { appId: app.id, provider, providerAccountId: identity.id, email: identity.email, emailVerified: identity.emailVerified, at: core.clock() };
  const linked = await core.db.oauth.findTenant(app.id, provider, identity.id);
  if (linked) {
    await core.db.oauth.touch(link);
    return finishSignIn(core, app, linked, `oauth:${provider}`);
  }
  try {
    const existing = identity.email && identity.emailVerified ? await core.db.tenants.findByEmail(app.id, identity.email) : undefined;
    if (existing) {
      await core.db.oauth.linkExisting(link, existing.id);
      const tenant = (await core.db.tenants.findById(app.id, existing.id))!;
      await securityEvent(core, app, tenant.id, "sign_in_method.added", { method: `oauth:${provider}` });
      return finishSignIn(core, app, tenant, `oauth:${provider}`);
    }
    return await signUp(core, app, provider, identity, inviteToken, link);
  } catch (e) {
    if (retry && isUniqueViolation(e)) return signIn(core, app, provider, identity, inviteToken, false);
    if (isUniqueViolation(e)) throw fail("email_exists", "An account with this email already exists. Sign in with your password.");
    throw e;
  }
}

/** A new tenant: no second factor yet, so tokens (with `requireMfa` the app asks it to enrol). */
async function signUp(core: Core, app: AppRow, provider: OAuthProviderName, identity: Identity, inviteToken: string | null, link: OAuthLink): Promise<SignInOutcome> {
  if (app.settings.signupMode === "closed") throw fail("signup_disabled", "Sign-up is closed for this app.");
  const claim = await checkSignupInvite(core, app, inviteToken);
  const now = link.at;
  const tenant: TenantRow = {
    id: newId("tnt"),
    appId: app.id,
    email: identity.email !== null && identity.emailVerified ? identity.email : placeholderEmail(provider, identity.id),
    passwordHash: null,
    emailVerifiedAt: identity.email !== null && identity.emailVerified ? now : null,
    locale: "en",
    parentTenantId: claim?.parentTenantId ?? null,
    createdAt: now,
  };
  const { session, refreshToken } = newSession(now, `oauth:${provider}`);
  const linkStep = core.db.oauth.linkStep(link);
  await core.db.tenants.createWithSession(tenant, session, (tenantId) => {
    linkStep(tenantId);
    claim?.step(tenantId);
  });
  // The address is either vouched for or a placeholder that never delivers: nothing to verify.
  await core.hooks.emit("tenant.created", { app, tenant, inviteToken: inviteToken ?? undefined, sendEmail: false, provider });
  return { tenant, method: `oauth:${provider}`, tokens: await tokenPair(core, tenant, session.id, refreshToken) };
}
