import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { requireTenant } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { asTenant, auditRequest } from "../audit/http.ts";
import { requireRecentAuth } from "../auth/step-up.ts";
import { exportArchive, exportHeaders } from "./export.ts";

export function registerExportRoutes(router: Router, core: Core): void {
  // The download is the export: streamed as it is read, nothing kept on the server (docs/export.md).
  router.get("/api/v1/account/export", async (event) => {
    const auth = await requireTenant(event, core);
    // Everything the account holds, in one file: as sensitive as deleting it.
    await requireRecentAuth(core, auth, "Exporting the account's data");
    const tenant = await core.db.tenants.findById(auth.app.id, auth.tenantId);
    if (!tenant) throw fail("session_ended", "This account no longer exists.");
    const body = exportArchive(core, auth.app, tenant);
    try {
      await auditRequest(core, event, { appId: auth.app.id, action: "tenant.data_exported", tenantId: tenant.id, actor: asTenant(tenant.id) });
    } catch (e) {
      // An archive nobody will read would hold the account's one export slot.
      await body.cancel();
      throw e;
    }
    return new Response(body, { headers: exportHeaders(tenant, core.clock()) });
  });
}
