import type { H3Event } from "h3";
import type { Core } from "../core.ts";
import type { AppRow, ConsumeOutcome, TenantRow } from "../db/types.ts";
import { hashToken, newToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";
import { queueTenantEmail } from "../email/tenant-email.ts";
import { escapeHtml } from "../tools/html.ts";
import { button, hidden, page } from "../auth/pages.ts";

/** How long an emailed export link works (once). */
export const EXPORT_LINK_TTL_MS = 24 * 3600 * 1000;

/**
 * Mails the tenant a one-use link to its export (docs/export.md), in its language. Only the
 * link's hash is stored. The export itself is made when the link is used, so "ready" is at
 * once and nothing waits on the server meanwhile. Refused when the address cannot take it:
 * the app sends its own email, the address is a placeholder, or it was never verified (the
 * whole account must not go to a mistyped address).
 */
export async function sendExportLink(core: Core, app: AppRow, tenant: TenantRow): Promise<{ sentTo: string; expiresAt: string }> {
  const direct = "Download the export directly with GET /api/v1/account/export instead.";
  if (!app.settings.email.sendEmail) throw fail("conflict", `This app sends its own email, so tenantd mails no export link. ${direct}`);
  if (tenant.email.endsWith(".invalid")) throw fail("conflict", `This account has no email address to send the link to. ${direct}`);
  if (tenant.emailVerifiedAt === null) throw fail("email_not_verified", `The account's email address is not verified: verify it first, or ${direct.charAt(0).toLowerCase()}${direct.slice(1)}`);
  const token = newToken("exl");
  const createdAt = core.clock();
  const expiresAt = createdAt + EXPORT_LINK_TTL_MS;
  await core.db.emailTokens.issueExportLink({ hash: hashToken(token), appId: app.id, tenantId: tenant.id, createdAt, expiresAt });
  queueTenantEmail(core, app, tenant, "export", token);
  return { sentTo: tenant.email, expiresAt: toIso(expiresAt)! };
}

const REFUSED: Record<Exclude<ConsumeOutcome, { ok: true }>["reason"], string> = {
  unknown: "This download link is not valid. Ask for a new one from the app.",
  used: "This download link was already used: each link downloads once. Ask for a new one from the app.",
  expired: "This download link has expired (links work for 24 hours). Ask for a new one from the app.",
};

/** The page the emailed link opens: a button, so a mail scanner fetching the link uses nothing. */
export async function exportLinkPage(core: Core, event: H3Event, app: AppRow, token: string): Promise<Response> {
  const name = app.settings.email.appName ?? app.name;
  const outcome = await core.db.emailTokens.checkExportLink(hashToken(token), app.id, core.clock());
  if (!outcome.ok) return refusedPage(event, outcome);
  return page(event, `Download your ${name} data`,
    `<p>One ZIP file with your profile, records, files, billing and activity. The link works once.</p><form method="post">${hidden("app", app.id)}${hidden("token", token)}${button("Download")}</form>`);
}

/** The page saying why a link cannot download (used, expired, unknown). */
export const refusedPage = (event: H3Event, outcome: Exclude<ConsumeOutcome, { ok: true }>) => page(event, "Download not available", `<p>${escapeHtml(REFUSED[outcome.reason])}</p>`);
