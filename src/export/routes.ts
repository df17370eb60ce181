import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { requireTenant } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { asTenant, auditRequest } from "../audit/http.ts";
import { requireRecentAuth } from "../auth/step-up.ts";
import { appFrom, linkParams, page, readForm } from "../auth/pages.ts";
import { DEFAULT_LINK_PATHS } from "../email/tenant-email.ts";
import { hashToken } from "../crypto/random.ts";
import { exportArchive, exportHeaders } from "./export.ts";
import { exportLinkPage, refusedPage, sendExportLink } from "./email-link.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import type { H3Event } from "h3";

export function registerExportRoutes(router: Router, core: Core): void {
  /**
   * Starts the archive and records the export; an archive nobody will read would hold the
   * account's one export slot, so a failed audit cancels it.
   */
  async function download(event: H3Event, app: AppRow, tenant: TenantRow, body: ReadableStream<Uint8Array>, details?: Record<string, unknown>): Promise<Response> {
    try {
      await auditRequest(core, event, { appId: app.id, action: "tenant.data_exported", tenantId: tenant.id, actor: asTenant(tenant.id), details });
    } catch (e) {
      await body.cancel();
      throw e;
    }
    return new Response(body, { headers: exportHeaders(tenant, core.clock()) });
  }

  // The download is the export: streamed as it is read, nothing kept on the server (docs/export.md).
  router.get("/api/v1/account/export", async (event) => {
    const auth = await requireTenant(event, core);
    // Everything the account holds, in one file: as sensitive as deleting it.
    await requireRecentAuth(core, auth, "Exporting the account's data");
    const tenant = await core.db.tenants.findById(auth.app.id, auth.tenantId);
    if (!tenant) throw fail("session_ended", "This account no longer exists.");
    return download(event, auth.app, tenant, exportArchive(core, auth.app, tenant));
  });

  // The same export, by a one-use link mailed to the account's verified address.
  router.post("/api/v1/account/export/email", async (event) => {
    const auth = await requireTenant(event, core);
    await requireRecentAuth(core, auth, "Exporting the account's data");
    const tenant = await core.db.tenants.findById(auth.app.id, auth.tenantId);
    if (!tenant) throw fail("session_ended", "This account no longer exists.");
    const sent = await sendExportLink(core, auth.app, tenant);
    await auditRequest(core, event, { appId: auth.app.id, action: "tenant.data_export_link_sent", tenantId: tenant.id, actor: asTenant(tenant.id) });
    event.res.status = 202;
    return sent;
  });

  router.get(DEFAULT_LINK_PATHS.export, async (event) => {
    const { app, token } = linkParams(event);
    return exportLinkPage(core, event, await appFrom(core, app), token);
  });
  router.post(DEFAULT_LINK_PATHS.export, async (event) => {
    const form = await readForm(event);
    const app = await appFrom(core, form.get("app"));
    const hash = hashToken(form.get("token") ?? "");
    const checked = await core.db.emailTokens.checkExportLink(hash, app.id, core.clock());
    if (!checked.ok) return refusedPage(event, checked);
    const tenant = await core.db.tenants.findById(app.id, checked.tenantId);
    if (!tenant) return page(event, "Download not available", "<p>This account no longer exists.</p>");
    // The export slot first: a link is used up only by a download that starts.
    let body: ReadableStream<Uint8Array>;
    try {
      body = exportArchive(core, app, tenant);
    } catch {
      return page(event, "Download not available", "<p>An export of this account is already being downloaded: try the link again when it has finished.</p>");
    }
    const used = await core.db.emailTokens.useExportLink(hash, app.id, core.clock());
    if (!used.ok) {
      await body.cancel();
      return refusedPage(event, used);
    }
    return download(event, app, tenant, body, { via: "email_link" });
  });
}
