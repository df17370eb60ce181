import { randomInt } from "node:crypto";
import * as v from "valibot";
import type { Core } from "../../core.ts";
import type { AppRow, TenantRow } from "../../db/types.ts";
import { hashToken, newId, newToken } from "../../crypto/random.ts";
import { hmacSha256 } from "../../crypto/hmac.ts";
import { fail } from "../../errors.ts";
import { EmailSchema } from "../../admin/developers.ts";
import { allowedRedirect, withFragment } from "../../oauth/redirect.ts";
import { mailerFor } from "../../email/mailer.ts";
import { isUniqueViolation } from "../../db/shared.ts";
import { accountKey, withLoginBackoff } from "../login-backoff.ts";
import { finishSignIn, type SignInOutcome } from "../sign-in-finish.ts";
import { toLocale } from "../signup.ts";
import { renderSignInEmail } from "./email.ts";

export const EMAIL_SIGN_IN_TTL_MS = 10 * 60 * 1000;
/** Wrong codes one request takes before it stops working: 5 guesses of 1,000,000. */
export const MAX_CODE_ATTEMPTS = 5;

export const EmailSignInBody = v.strictObject({
  email: EmailSchema,
  /** The app's page the link opens (one of settings.oauth.redirectUrls); without it the email carries the code only. */
  redirectUrl: v.optional(v.pipe(v.string(), v.maxLength(2048))),
  locale: v.optional(v.pipe(v.string(), v.maxLength(35))),
});
export const EmailSignInVerifyBody = v.union(
  [
    v.strictObject({ email: EmailSchema, code: v.pipe(v.string(), v.trim(), v.regex(/^\d{6}$/, "code must be the 6 digits from the email")) }),
    v.strictObject({ token: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) }),
  ],
  "give { email, code } (the 6 digits from the email) or { token } (from the link)",
);

const codeMacs = new WeakMap<Core, ReturnType<typeof hmacSha256>>();
/** A code at rest: an HMAC bound to the app and address, under a key only the server holds. */
function codeHash(core: Core, appId: string, email: string, code: string): string {
  let mac = codeMacs.get(core);
  if (!mac) codeMacs.set(core, (mac = hmacSha256(core.secrets.deriveKey("email-sign-in-code"))));
  return mac(`${appId}\n${email}\n${code}`, "hex");
}

export function requireEmailSignIn(app: AppRow): void {
  if (!app.settings.auth.emailSignIn) {
    throw fail("forbidden", "Email sign-in is not enabled for this app: the developer turns it on with the setting auth.emailSignIn.");
  }
}

/**
 * Emails a 6-digit code (and a link, when the app names its page) to the address. The answer
 * is the same whether or not the address has an account; an address that has none and could
 * not sign up (sign-up closed or by invite) gets no email.
 */
export async function requestEmailSignIn(core: Core, app: AppRow, input: v.InferOutput<typeof EmailSignInBody>): Promise<void> {
  requireEmailSignIn(app);
  const redirect = input.redirectUrl === undefined ? null : allowedRedirect(app, input.redirectUrl);
  const tenant = await core.db.tenants.findByEmail(app.id, input.email);
  if (!tenant && app.settings.signupMode !== "open") return;
  const code = String(randomInt(0, 1_000_000)).padStart(6, "0");
  const token = newToken("esi");
  const now = core.clock();
  await core.db.signIn.issueEmailSignIn(
    { id: newId("esi"), appId: app.id, email: input.email, linkHash: hashToken(token), codeHash: codeHash(core, app.id, input.email, code), createdAt: now, expiresAt: now + EMAIL_SIGN_IN_TTL_MS },
    now,
  );
  const lang = toLocale(input.locale ?? tenant?.locale);
  const link = redirect === null ? null : withFragment(redirect, { service_email_token: token });
  mailerFor(core).queue(() => ({
    appId: app.id,
    tenantId: tenant?.id ?? null,
    kind: "sign-in",
    locale: lang,
    from: app.settings.email.from ?? core.config.email.from,
    to: input.email,
    ...renderSignInEmail(lang, { appName: app.settings.email.appName ?? app.name, code, link }),
    link: link ?? "",
  }));
}

const REFUSED: Record<"unknown" | "used" | "expired" | "attempts", string> = {
  unknown: "Wrong or replaced code. Check the newest email, or ask for a new code.",
  used: "This code or link was already used. Ask for a new one.",
  expired: "This code or link expired (they last 10 minutes). Ask for a new one.",
  attempts: "Too many wrong codes for this email. Ask for a new code.",
};

/**
 * Signs in with the code (under the login backoff of the address) or the link. The tenant of
 * the address, proven now; a new tenant when there is none and sign-up is open.
 */
export async function verifyEmailSignIn(core: Core, app: AppRow, input: v.InferOutput<typeof EmailSignInVerifyBody>, client: string): Promise<SignInOutcome> {
  requireEmailSignIn(app);
  const now = core.clock();
  const outcome =
    "token" in input
      ? await core.db.signIn.consumeEmailLink(app.id, hashToken(input.token), now)
      : await withLoginBackoff(core, { account: accountKey("tenant", input.email, app.id), client }, async () => {
          const o = await core.db.signIn.consumeEmailCode(app.id, input.email, codeHash(core, app.id, input.email, input.code), now, MAX_CODE_ATTEMPTS);
          if (!o.ok) throw fail("invalid_credentials", REFUSED[o.reason]);
          return o;
        });
  if (!outcome.ok) throw fail("invalid_token", REFUSED[outcome.reason]);
  const tenant = await tenantOf(core, app, outcome.email, now);
  return finishSignIn(core, app, tenant, "token" in input ? "magic_link" : "email_code");
}

async function tenantOf(core: Core, app: AppRow, email: string, now: number): Promise<TenantRow> {
  const existing = await core.db.tenants.findByEmail(app.id, email);
  if (existing) {
    await core.db.signIn.proveInbox(app.id, existing.id, now);
    return (await core.db.tenants.findById(app.id, existing.id))!;
  }
  if (app.settings.signupMode !== "open") throw fail("signup_disabled", "Sign-up is closed for this app.");
  const tenant: TenantRow = { id: newId("tnt"), appId: app.id, email, passwordHash: null, emailVerifiedAt: now, locale: "en", parentTenantId: null, createdAt: now };
  try {
    await core.db.signIn.createTenant(tenant, false);
  } catch (e) {
    // Signed up meanwhile (a password sign-up, another tab): that account, its inbox now proven.
    if (isUniqueViolation(e)) return tenantOf(core, app, email, now);
    throw e;
  }
  await core.hooks.emit("tenant.created", { app, tenant, sendEmail: false });
  return tenant;
}
