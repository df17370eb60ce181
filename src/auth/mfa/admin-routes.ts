import { getRouterParam, type H3Event } from "h3";
import type { Core } from "../../core.ts";
import type { Router } from "../../http/router.ts";
import { requireDeveloper, requireOwnApp } from "../../http/guards.ts";
import { toIso } from "../../clock.ts";
import { auditRequest, developerActor } from "../../audit/http.ts";
import { requireTenantRef } from "../tenant-ref.ts";
import { mfaFactors } from "./factors.ts";
import { disableTotp } from "./totp.ts";
import { removePasskey, toPublicPasskey } from "../passkeys/service.ts";

/**
 * The developer's view of a tenant's sign-in methods, and the two repairs a support desk
 * needs: reset two-factor authentication (a lost phone) and remove a passkey (a lost
 * device). The tenant is told by email and the app by webhook, as when it acts itself.
 */
export function registerMfaAdminRoutes(router: Router, core: Core): void {
  const tenantOf = async (event: H3Event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    const tenant = await requireTenantRef(core, app, decodeURIComponent(getRouterParam(event, "tenantId") ?? ""));
    return { app, tenant };
  };
  const base = "/api/v1/admin/apps/:appId/tenants/:tenantId";

  router.get(`${base}/sign-in-methods`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const [factors, passkeys, providers, anonymous] = await Promise.all([
      mfaFactors(core, app, tenant.id),
      core.db.mfa.passkeys(app.id, tenant.id),
      core.db.oauth.listForTenant(app.id, tenant.id),
      core.db.signIn.isAnonymous(app.id, tenant.id),
    ]);
    return {
      password: tenant.passwordHash !== null,
      anonymous,
      totp: factors.totp,
      recoveryCodesLeft: factors.recoveryCodes,
      passkeys: passkeys.map(toPublicPasskey),
      providers: providers.map((l) => ({ provider: l.provider, linkedAt: toIso(l.linkedAt)!, email: l.email })),
    };
  });

  router.delete(`${base}/mfa`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    // The security event (tenant.mfa.disabled) and this entry both name the developer who did it.
    await disableTotp(core, app, tenant.id, developerActor(event));
    await auditRequest(core, event, { appId: app.id, action: "tenant.mfa_reset", tenantId: tenant.id });
    event.res.status = 204;
    return null;
  });

  router.delete(`${base}/passkeys/:passkeyId`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const passkeyId = getRouterParam(event, "passkeyId") ?? "";
    await removePasskey(core, app, tenant.id, passkeyId, developerActor(event));
    await auditRequest(core, event, { appId: app.id, action: "tenant.passkey_removed", tenantId: tenant.id, target: passkeyId });
    event.res.status = 204;
    return null;
  });
}
