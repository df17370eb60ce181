import { HTTPError, getQuery, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { Router } from "../http/router.ts";
import { readLimited } from "../http/body.ts";
import { enforceRateLimit } from "../http/rate-limit.ts";
import { fail } from "../errors.ts";
import { DEFAULT_LINK_PATHS } from "../email/tenant-email.ts";
import { verifyEmail } from "./verify-email.ts";
import { resetPassword } from "./password-reset.ts";
import { escapeHtml } from "../tools/html.ts";
import { auditTenant } from "../audit/http.ts";

const FORM_LIMIT = 4096;

export function page(event: H3Event, title: string, body: string): Response {
  event.res.headers.set("content-type", "text/html; charset=utf-8");
  event.res.headers.set("content-security-policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'");
  event.res.headers.set("x-content-type-options", "nosniff");
  event.res.headers.set("referrer-policy", "no-referrer");
  event.res.headers.set("cache-control", "no-store");
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)}</title></head>
<body style="font-family:system-ui,sans-serif;max-width:420px;margin:48px auto;padding:0 16px;line-height:1.5"><h1 style="font-size:22px">${escapeHtml(title)}</h1>${body}</body></html>`;
  return new Response(html, { headers: event.res.headers });
}

export async function appFrom(core: Core, id: unknown): Promise<AppRow> {
  const app = typeof id === "string" ? await core.db.apps.findById(id) : undefined;
  if (!app) throw fail("invalid_request", "This link names no app: open the link from the email exactly as it was sent.");
  return app;
}

export function linkParams(event: H3Event): { app: string; token: string } {
  const q = getQuery(event);
  if (typeof q.app !== "string" || typeof q.token !== "string" || !q.token) {
    throw fail("invalid_request", "This link is incomplete: open the link from the email exactly as it was sent.");
  }
  return { app: q.app, token: q.token };
}

export async function readForm(event: H3Event): Promise<URLSearchParams> {
  const type = event.req.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(type)) throw fail("unsupported_media_type", "Submit the form on this page.");
  return new URLSearchParams(await readLimited(event, FORM_LIMIT));
}

/** The reason a token was refused, for a person reading a page (the API gives it as JSON). */
async function outcome(run: () => Promise<void>): Promise<string | null> {
  try {
    await run();
    return null;
  } catch (e) {
    if (HTTPError.isError(e) && e.status < 500 && e.status !== 429) return e.message;
    throw e;
  }
}

export const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;
export const button = (label: string) => `<button style="padding:10px 18px;font-size:16px">${escapeHtml(label)}</button>`;

/**
 * The pages the email links open when the app sets no `verifyUrl` / `resetUrl`. Each shows a
 * form and acts only on its POST, so a mail scanner that fetches the link uses no token.
 */
export function registerAuthPages(router: Router, core: Core): void {
  router.get(DEFAULT_LINK_PATHS.verify, async (event) => {
    const { app, token } = linkParams(event);
    const a = await appFrom(core, app);
    return page(event, `Confirm your email for ${a.settings.email.appName ?? a.name}`,
      `<form method="post">${hidden("app", app)}${hidden("token", token)}${button("Confirm email")}</form>`);
  });
  router.post(DEFAULT_LINK_PATHS.verify, async (event) => {
    const form = await readForm(event);
    const app = await appFrom(core, form.get("app"));
    await enforceRateLimit(event, core, "verify-email");
    const error = await outcome(async () => void (await auditTenant(core, event, app.id, "tenant.email_verified", await verifyEmail(core, app, form.get("token") ?? ""))));
    return page(event, error ? "Email not confirmed" : "Email confirmed", `<p>${escapeHtml(error ?? "Thank you: your email address is confirmed. You can close this page.")}</p>`);
  });

  router.get(DEFAULT_LINK_PATHS.reset, async (event) => {
    const { app, token } = linkParams(event);
    const a = await appFrom(core, app);
    return page(event, `Choose a new password for ${a.settings.email.appName ?? a.name}`,
      `<form method="post">${hidden("app", app)}${hidden("token", token)}
<p><label>New password (8 to 256 characters)<br><input type="password" name="password" minlength="8" maxlength="256" required autocomplete="new-password" style="font-size:16px;width:100%"></label></p>
${button("Set password")}</form>`);
  });
  router.post(DEFAULT_LINK_PATHS.reset, async (event) => {
    const form = await readForm(event);
    const app = await appFrom(core, form.get("app"));
    await enforceRateLimit(event, core, "reset-password");
    const error = await outcome(async () => void (await auditTenant(core, event, app.id, "tenant.password_reset", await resetPassword(core, app, form.get("token") ?? "", form.get("password") ?? ""))));
    return page(event, error ? "Password not changed" : "Password changed",
      `<p>${escapeHtml(error ?? "Your password is changed and every device was signed out. Sign in again with the new password.")}</p>`);
  });
}
