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
    event.res.status = 201;
    return { plan: toAdminPlan(plan) };
  });
  router.patch(`${base}/plans/:planId`, async (event) => {
    const app = await ownApp(event);
    return { plan: toAdminPlan(await updatePlan(core, app, planId(event), await readJson(event, anyJson, core.config.maxJsonBytes))) };
  });
  router.post(`${base}/plans/:planId/archive`, async (event) => ({ plan: toAdminPlan(await setPlanArchived(core, await ownApp(event), planId(event), true)) }));
  router.post(`${base}/plans/:planId/unarchive`, async (event) => ({ plan: toAdminPlan(await setPlanArchived(core, await ownApp(event), planId(event), false)) }));
  router.post(`${base}/plans/:planId/sync-stripe`, async (event) => ({ plan: toAdminPlan(await syncPlanToStripe(core, await ownApp(event), planId(event))) }));

  router.get(`${base}/tenants/:tenantId/billing`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    return tenantBilling(core, app, tenant);
  });
  router.post(`${base}/tenants/:tenantId/billing/gift`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    return grantGift(core, app, tenant, await readJson(event, GiftBody, core.config.maxJsonBytes));
  });
  router.delete(`${base}/tenants/:tenantId/billing/gift`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    await revokeGift(core, app, tenant);
    event.res.status = 204;
    return null;
  });
  router.post(`${base}/tenants/:tenantId/billing/trial`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    return grantTrial(core, app, tenant, await readJson(event, TrialBody, core.config.maxJsonBytes));
  });
}
