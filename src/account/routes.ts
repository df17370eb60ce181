import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { requireDeveloper, requireOwnApp, requireTenant } from "../http/guards.ts";
import { deleteTenant } from "./delete.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { requireRecentAuth } from "../auth/step-up.ts";
import { asTenant, auditRequest } from "../audit/http.ts";

/** Account deletion: by the tenant itself, or by the app's developer. */
export function registerAccountRoutes(router: Router, core: Core): void {
  router.post("/api/v1/tenants/me/delete", async (event) => {
    const auth = await requireTenant(event, core);
    await requireRecentAuth(core, auth, "Deleting the account");
    await deleteTenant(core, auth.app, auth.tenantId, "self_delete");
    await auditRequest(core, event, { appId: auth.app.id, action: "tenant.deleted", tenantId: auth.tenantId, actor: asTenant(auth.tenantId), details: { reason: "self_delete" } });
    return { ok: true, deleted: true };
  });

  router.delete("/api/v1/admin/apps/:appId/tenants/:tenantId", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    const tenant = await requireTenantRef(core, app, decodeURIComponent(getRouterParam(event, "tenantId") ?? ""));
    await deleteTenant(core, app, tenant.id, "admin_delete");
    await auditRequest(core, event, { appId: app.id, action: "tenant.deleted", tenantId: tenant.id, details: { reason: "admin_delete" } });
    event.res.status = 204;
    return null;
  });
}
