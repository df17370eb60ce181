import * as v from "valibot";
import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson } from "../http/body.ts";
import { requireDeveloper, requireOwnApp } from "../http/guards.ts";
import { createPlan, setPlanArchived, toAdminPlan, updatePlan } from "./plans.ts";
import { syncPlanToStripe } from "./stripe-sync.ts";
import { GiftBody, TrialBody, grantGift, grantTrial, revokeGift, tenantBilling } from "./grants.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { auditRequest } from "../audit/http.ts";
import type { AppRow, PlanRow } from "../db/types.ts";

export const PlanListQuery = v.object({ archived: v.optional(v.picklist(["true", "false"], "must be true or false"), "false") });

/** Developer administration of plans and of one tenant's billing (developer session, own apps only). */
export function registerBillingAdminRoutes(router: Router, core: Core): void {
  const base = "/api/v1/admin/apps/:appId";
  const ownApp = async (event: H3Event) => {
    const { developer } = await requireDeveloper(event, core);
    return requireOwnApp(core, developer, getRouterParam(event, "appId"));
  };
  const planId = (event: H3Event) => getRouterParam(event, "planId") ?? "";
  const tenantOf = async (event: H3Event) => {
    const app = await ownApp(event);
    return { app, tenant: await requireTenantRef(core, app, decodeURIComponent(getRouterParam(event, "tenantId") ?? "")) };
  };
  // The body is validated by the plan functions, which the CLI calls too.
  const anyJson = v.unknown();

  router.get(`${base}/plans`, async (event) => {
    const app = await ownApp(event);
    const q = parseInput(PlanListQuery, getQuery(event), "query");
    return { plans: (await core.db.billing.listPlans(app.id, { includeArchived: q.archived === "true" })).map(toAdminPlan) };
  });
  router.post(`${base}/plans`, async (event) => {
    const app = await ownApp(event);
    const plan = await createPlan(core, app, await readJson(event, anyJson, core.config.maxJsonBytes));
    await auditRequest(core, event, { appId: app.id, action: "plan.created", target: plan.id, details: { slug: plan.slug } });
    event.res.status = 201;
    return { plan: toAdminPlan(plan) };
  });
  router.patch(`${base}/plans/:planId`, async (event) => {
    const app = await ownApp(event);
    const body = await readJson(event, anyJson, core.config.maxJsonBytes);
    const plan = await updatePlan(core, app, planId(event), body);
    await auditRequest(core, event, { appId: app.id, action: "plan.updated", target: plan.id, details: { fields: body && typeof body === "object" ? Object.keys(body) : [] } });
    return { plan: toAdminPlan(plan) };
  });
  const planAction = (action: string, change: (app: AppRow, id: string) => Promise<PlanRow>) => async (event: H3Event) => {
    const app = await ownApp(event);
    const plan = await change(app, planId(event));
    await auditRequest(core, event, { appId: app.id, action, target: plan.id });
    return { plan: toAdminPlan(plan) };
  };
  router.post(`${base}/plans/:planId/archive`, planAction("plan.archived", (app, id) => setPlanArchived(core, app, id, true)));
  router.post(`${base}/plans/:planId/unarchive`, planAction("plan.unarchived", (app, id) => setPlanArchived(core, app, id, false)));
  router.post(`${base}/plans/:planId/sync-stripe`, planAction("plan.synced_to_stripe", (app, id) => syncPlanToStripe(core, app, id)));

  router.get(`${base}/tenants/:tenantId/billing`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    return tenantBilling(core, app, tenant);
  });
  router.post(`${base}/tenants/:tenantId/billing/gift`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const body = await readJson(event, GiftBody, core.config.maxJsonBytes);
    const result = await grantGift(core, app, tenant, body);
    await auditRequest(core, event, { appId: app.id, action: "billing.gift_granted", tenantId: tenant.id, details: { ...body } });
    return result;
  });
  router.delete(`${base}/tenants/:tenantId/billing/gift`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    await revokeGift(core, app, tenant);
    await auditRequest(core, event, { appId: app.id, action: "billing.gift_revoked", tenantId: tenant.id });
    event.res.status = 204;
    return null;
  });
  router.post(`${base}/tenants/:tenantId/billing/trial`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const body = await readJson(event, TrialBody, core.config.maxJsonBytes);
    const result = await grantTrial(core, app, tenant, body);
    await auditRequest(core, event, { appId: app.id, action: "billing.trial_granted", tenantId: tenant.id, details: { ...body } });
    return result;
  });
}
