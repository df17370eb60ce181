import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson } from "../http/body.ts";
import { requireDeveloper, requireOwnApp, requireTenant } from "../http/guards.ts";
import { PortalBody } from "../billing/checkout.ts";
import { GiftBody, TrialBody } from "../billing/grants.ts";
import { FeatureKeyParam, IncrementBody, UsageQuery } from "../billing/usage.ts";
import { requireRecentAuth } from "../auth/step-up.ts";
import { asTenant, auditRequest, developerActor, requestOrigin } from "../audit/http.ts";
import {
  adminOrgBilling, grantOrg, incrementOrgUsage, openOrgPortal, OrgCheckoutBody, orgBilling, readOrgUsage, revokeOrgGrant, SeatsBody, setOrgSeats, startOrgCheckout,
} from "./billing.ts";

/** Billing per organization (docs/organizations.md#billing): its members' routes and the developer's. */
export function registerOrgBillingRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;
  const base = "/api/v1/orgs/:orgId/billing";
  const orgId = (event: H3Event) => getRouterParam(event, "orgId") ?? "";
  const featureKey = (event: H3Event) => parseInput(FeatureKeyParam, getRouterParam(event, "featureKey") ?? "", "path.featureKey");

  router.get(base, async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return orgBilling(core, app, tenantId, orgId(event));
  });
  router.post(`${base}/checkout`, async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return startOrgCheckout(core, app, tenantId, orgId(event), await readJson(event, OrgCheckoutBody, limit));
  });
  router.post(`${base}/portal`, async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, PortalBody, limit);
    await requireRecentAuth(core, auth, "The billing portal");
    const portal = await openOrgPortal(core, auth.app, auth.tenantId, orgId(event), body.returnUrl);
    // As for a tenant's portal: recorded once the link exists, never its URL (a bearer link).
    await auditRequest(core, event, { appId: auth.app.id, action: "org.billing_portal_opened", tenantId: auth.tenantId, target: orgId(event), actor: asTenant(auth.tenantId) });
    return portal;
  });
  router.put(`${base}/seats`, async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const body = await readJson(event, SeatsBody, limit);
    return setOrgSeats(core, app, tenantId, orgId(event), body.seats);
  });
  router.get(`${base}/usage/:featureKey`, async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const query = parseInput(UsageQuery, getQuery(event), "query");
    return readOrgUsage(core, app, tenantId, orgId(event), featureKey(event), query.period);
  });
  router.post(`${base}/usage/:featureKey/increment`, async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const key = featureKey(event);
    return incrementOrgUsage(core, app, tenantId, orgId(event), key, await readJson(event, IncrementBody, limit));
  });

  // The developer's view and grants (developer session), like a tenant's billing in the admin API.
  const admin = "/api/v1/admin/apps/:appId/orgs/:orgId/billing";
  const developerOf = async (event: H3Event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    return { app, actor: { tenantId: null, by: developerActor(event), origin: requestOrigin(event, core) } };
  };
  router.get(admin, async (event) => {
    const { app } = await developerOf(event);
    return adminOrgBilling(core, app, orgId(event));
  });
  router.post(`${admin}/gift`, async (event) => {
    const { app, actor } = await developerOf(event);
    return grantOrg(core, app, actor, orgId(event), "gift", await readJson(event, GiftBody, limit));
  });
  router.post(`${admin}/trial`, async (event) => {
    const { app, actor } = await developerOf(event);
    return grantOrg(core, app, actor, orgId(event), "trial", await readJson(event, TrialBody, limit));
  });
  for (const kind of ["gift", "trial"] as const) {
    router.delete(`${admin}/${kind}`, async (event) => {
      const { app, actor } = await developerOf(event);
      await revokeOrgGrant(core, app, actor, orgId(event), kind);
      event.res.status = 204;
      return null;
    });
  }
}
