import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { noStore, requireDeveloper } from "../http/guards.ts";
import { adminLookups } from "./tenant-routes.ts";
import { newSession } from "../auth/sessions.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "../auth/access-token.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { auditRequest } from "../audit/http.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";

/** The session's `auth_methods`: how the overview and the guard tell it from a sign-in. */
export const IMPERSONATION_METHOD = "impersonation";

/**
 * Opens a read-only session as the tenant for the developer (docs/dashboard.md, Impersonate):
 * one access token, no refresh token (the session ends with it, 15 minutes), its `imp` claim
 * naming the developer so the tenant guard refuses every write and step-up. The session is
 * the tenant's like any other (its session list shows it, ending all sessions ends it).
 */
export async function impersonateTenant(core: Core, app: AppRow, tenant: TenantRow, developerId: string) {
  const now = core.clock();
  // The refresh token is never handed out: the session cannot outlive its access token.
  const { session } = newSession(now, IMPERSONATION_METHOD);
  session.expiresAt = now + ACCESS_TOKEN_TTL_SECONDS * 1000;
  await core.db.sessions.create(tenant.id, app.id, session);
  const signer = await core.signingKeys.signer(app.id);
  const { token, exp } = core.accessTokens.issue({ sub: tenant.id, app: app.id, sid: session.id, pid: tenant.parentTenantId, imp: developerId }, now, signer);
  return { accessToken: token, appId: app.id, sessionId: session.id, tenant: toPublicTenant(tenant), readOnly: true, expiresAt: toIso(exp * 1000)!, expiresIn: ACCESS_TOKEN_TTL_SECONDS };
}

export function registerImpersonationRoutes(router: Router, core: Core): void {
  const base = "/api/v1/admin/apps/:appId/tenants/:tenantId/impersonate";
  const { tenantOf } = adminLookups(core);

  router.post(base, async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const { app, tenant } = await tenantOf(event);
    noStore(event);
    const opened = await impersonateTenant(core, app, tenant, developer.id);
    await auditRequest(core, event, { appId: app.id, action: "tenant.impersonated", tenantId: tenant.id, target: opened.sessionId, details: { readOnly: true, expiresAt: opened.expiresAt } });
    event.res.status = 201;
    return opened;
  });

  // The banner's "End now": the token stops working at once, before its 15 minutes.
  router.delete(`${base}/:sessionId`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const sessionId = getRouterParam(event, "sessionId") ?? "";
    const auth = await core.db.mfa.sessionAuth(sessionId);
    if (!auth || auth.tenantId !== tenant.id || auth.methods !== IMPERSONATION_METHOD) throw fail("not_found", `No impersonation session ${sessionId} of this tenant.`);
    await core.db.sessions.end(sessionId, core.clock(), "impersonation_ended");
    await auditRequest(core, event, { appId: app.id, action: "tenant.impersonation_ended", tenantId: tenant.id, target: sessionId });
    event.res.status = 204;
    return null;
  });
}
