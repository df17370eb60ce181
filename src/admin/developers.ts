import { COMMON_PASSWORD_MESSAGE, isUncommonPassword } from "../auth/common-passwords.ts";
import * as v from "valibot";
import { newId, newToken, hashToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";
import type { Core } from "../core.ts";
import type { DeveloperRow } from "../db/types.ts";
import { accountKey, clearLoginBackoff, withLoginBackoff } from "../auth/login-backoff.ts";

export const DEVELOPER_SESSION_TTL_MS = 30 * 24 * 3600 * 1000;

export const EmailSchema = v.pipe(
  v.string(),
  v.trim(),
  v.toLowerCase(),
  v.maxLength(254, "email is at most 254 characters"),
  v.email("must be an email address"),
);
export const PasswordSchema = v.pipe(
  v.string(),
  v.minLength(8, "password must be at least 8 characters"),
  v.maxLength(256, "password must be at most 256 characters"),
  v.check(isUncommonPassword, COMMON_PASSWORD_MESSAGE),
);

export const toPublicDeveloper = (d: DeveloperRow) => ({ id: d.id, email: d.email, createdAt: toIso(d.createdAt)! });

/** Creates a developer account. The first developer adopts the apps that have no owner yet. */
export async function createDeveloper(core: Core, input: { email: string; password: string }): Promise<{ developer: DeveloperRow; adoptedApps: number }> {
  const email = v.parse(EmailSchema, input.email);
  const password = v.parse(PasswordSchema, input.password);
  if (await core.db.developers.findByEmail(email)) throw fail("email_exists", `A developer with email ${email} already exists.`);
  const developer: DeveloperRow = { id: newId("dev"), email, passwordHash: await core.passwords.hash(password), createdAt: core.clock() };
  await core.db.developers.insert(developer);
  const adoptedApps = (await core.db.developers.list()).length === 1 ? await core.db.apps.adoptUnowned(developer.id) : 0;
  return { developer, adoptedApps };
}

export async function setDeveloperPassword(core: Core, email: string, password: string): Promise<void> {
  const developer = await core.db.developers.findByEmail(v.parse(EmailSchema, email));
  if (!developer) throw fail("not_found", `No developer with email ${email}.`);
  await core.db.developers.setPassword(developer.id, await core.passwords.hash(v.parse(PasswordSchema, password)));
  await clearLoginBackoff(core, accountKey("developer", developer.email));
}

/**
 * Signs a developer in: an opaque session token, stored only as its SHA-256 hash. Under the
 * account's sign-in backoff whoever calls it (admin API, dashboard); `client` is the caller's address.
 */
export async function loginDeveloper(core: Core, email: string, password: string, client: string) {
  const developer = await withLoginBackoff(core, { account: accountKey("developer", email), client }, async () => {
    const found = await core.db.developers.findByEmail(email);
    const ok = found ? await core.passwords.verify(found.passwordHash, password) : await core.passwords.verifyDummy(password);
    if (!found || !ok) throw fail("invalid_credentials", "Wrong email or password.");
    return found;
  });
  const token = newToken("dev");
  const now = core.clock();
  const expiresAt = now + DEVELOPER_SESSION_TTL_MS;
  await core.db.developers.createSession(hashToken(token), developer.id, now, expiresAt);
  return { token, expiresAt: toIso(expiresAt)!, developer: toPublicDeveloper(developer) };
}

/** Usage of the developer's apps this calendar month (UTC). */
export async function developerUsage(core: Core, developer: DeveloperRow) {
  const now = new Date(core.clock());
  const monthStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1);
  const apps = await core.db.apps.list(developer.id);
  const perApp = await Promise.all(apps.map((a) => core.db.stats.appUsage(a.id, monthStart)));
  const sum = (k: "tenants" | "records" | "fileBytes" | "webhookDeliveriesThisMonth") => perApp.reduce((n, u) => n + u[k], 0);
  return {
    period: { start: toIso(monthStart)!, end: toIso(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1))! },
    totals: {
      apps: apps.length,
      tenants: sum("tenants"),
      records: sum("records"),
      fileBytes: sum("fileBytes"),
      webhookDeliveriesThisMonth: sum("webhookDeliveriesThisMonth"),
    },
    apps: perApp,
  };
}
