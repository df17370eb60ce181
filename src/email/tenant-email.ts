import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { toLocale } from "../auth/signup.ts";
import { mailerFor } from "./mailer.ts";
import { renderEmail, type EmailKind } from "./templates.ts";

/** Default pages tenantd serves when the app sets no `verifyUrl` / `resetUrl`. */
export const DEFAULT_LINK_PATHS: Record<EmailKind, string> = {
  verify: "/auth/verify-email",
  reset: "/auth/reset-password",
  export: "/account/export-download",
};

/**
 * The link a tenant follows: the app's `settings.email.verifyUrl` / `resetUrl` with every
 * `{token}` replaced, or tenantd's own page under `publicUrl`.
 */
export function emailLink(core: Core, app: AppRow, kind: EmailKind, token: string): string {
  // The export's link always opens tenantd's page: the download is served here.
  const template = kind === "verify" ? app.settings.email.verifyUrl : kind === "reset" ? app.settings.email.resetUrl : undefined;
  const t = encodeURIComponent(token);
  if (template) return template.replaceAll("{token}", t);
  return `${core.config.publicUrl}${DEFAULT_LINK_PATHS[kind]}?app=${encodeURIComponent(app.id)}&token=${t}`;
}

/** Queues the verification or reset email for a tenant, in the given locale or the tenant's own. */
export function queueTenantEmail(core: Core, app: AppRow, tenant: TenantRow, kind: EmailKind, token: string, locale?: string): void {
  mailerFor(core).queue(() => {
    const lang = toLocale(locale ?? tenant.locale);
    const link = emailLink(core, app, kind, token);
    const { subject, text, html } = renderEmail(kind, lang, { appName: app.settings.email.appName ?? app.name, link });
    return {
      appId: app.id,
      tenantId: tenant.id,
      kind,
      locale: lang,
      from: app.settings.email.from ?? core.config.email.from,
      to: tenant.email,
      subject,
      text,
      html,
      link,
    };
  });
}
