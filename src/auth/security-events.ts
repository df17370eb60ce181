import type { Core } from "../core.ts";
import { audit, type AuditActor } from "../audit/audit.ts";
import { asTenant } from "../audit/http.ts";
import type { AppRow } from "../db/types.ts";
import { mailerFor } from "../email/mailer.ts";
import { renderSecurityEmail } from "../email/security-templates.ts";
import { enqueueEvent } from "../webhooks/events.ts";
import { toLocale } from "./signup.ts";

export type SecurityEventName = "passkey.added" | "passkey.removed" | "mfa.enabled" | "mfa.disabled" | "mfa.recovery_code_used" | "sign_in_method.added";

/**
 * Tells the tenant (an email in its language, unless the app delivers its own email) and the
 * app (the `tenant.security` webhook event, `payload.type` naming what happened) that its
 * sign-in changed, and records it in the audit trail as done by `actor` (the tenant, unless
 * a developer acted). Neither message may fail the action: it already happened.
 */
export async function securityEvent(
  core: Core,
  app: AppRow,
  tenantId: string,
  type: SecurityEventName,
  details: Record<string, unknown> = {},
  actor: AuditActor = asTenant(tenantId),
): Promise<void> {
  const tenant = await core.db.tenants.findById(app.id, tenantId);
  if (!tenant) return;
  await audit(core, { appId: app.id, action: `tenant.${type}`, tenantId, actor, details });
  try {
    await enqueueEvent(core, { appId: app.id, event: "tenant.security", tenantId, email: tenant.email, payload: { type, ...details } });
  } catch (e) {
    core.log.error("security webhook event not queued", { tenantId, type, error: e instanceof Error ? e.message : String(e) });
  }
  // A placeholder address of a social account (`.invalid`) never delivers.
  if (!app.settings.email.sendEmail || tenant.email.endsWith(".invalid")) return;
  mailerFor(core).queue(() => {
    const locale = toLocale(tenant.locale);
    const { subject, text, html } = renderSecurityEmail(type, locale, app.settings.email.appName ?? app.name);
    return { appId: app.id, tenantId, kind: `security:${type}`, locale, from: app.settings.email.from ?? core.config.email.from, to: tenant.email, subject, text, html, link: null };
  });
}
