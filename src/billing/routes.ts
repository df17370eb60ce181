import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson, readLimited } from "../http/body.ts";
import { requireApp, requireTenant, tenantRoute } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { toPlanInfo } from "./plans.ts";
import { CheckoutBody, PortalBody, openPortal, startCheckout } from "./checkout.ts";
import { effectiveEntitlements, effectiveSubscription } from "./effective.ts";
import { FeatureKeyParam, IncrementBody, UsageQuery, incrementUsage, readUsage } from "./usage.ts";
import { idempotencyKeyOf, idempotentWrite } from "../data/idempotency.ts";
import type { Awaitable } from "../awaitable.ts";
import { handleStripeWebhook } from "./stripe-webhook.ts";
import { registerBillingDevRoutes } from "./dev-routes.ts";
import { requireRecentAuth } from "../auth/step-up.ts";
import { registerBillingAdminRoutes } from "./admin-routes.ts";
import { asTenant, auditRequest } from "../audit/http.ts";

/** HTTP routes of the billing area: the spec's tenant endpoints, Stripe's webhook, dev pages, admin. */
export function registerBillingRoutes(router: Router, core: Core): void {
  const featureKey = (event: H3Event) => parseInput(FeatureKeyParam, getRouterParam(event, "featureKey") ?? "", "path.featureKey");

  router.get("/api/v1/billing/plans", async (event) => {
    const app = await requireApp(event, core);
    return { plans: (await core.db.billing.listPlans(app.id, { includeArchived: false })).map(toPlanInfo) };
  });
  router.post("/api/v1/billing/checkout", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return startCheckout(core, app, tenantId, await readJson(event, CheckoutBody, core.config.maxJsonBytes));
  });
  router.post("/api/v1/billing/portal", async (event) => {
    const auth = await requireTenant(event, core);
    const { app, tenantId } = auth;
    const body = await readJson(event, PortalBody, core.config.maxJsonBytes);
    await requireRecentAuth(core, auth, "The billing portal");
    const portal = await openPortal(core, app, tenantId, body.returnUrl);
    // A step-up action like the others: recorded once the portal link exists, never its URL (a bearer link).
    await auditRequest(core, event, { appId: app.id, action: "tenant.billing_portal_opened", tenantId, actor: asTenant(tenantId) });
    return portal;
  });
  router.get("/api/v1/billing/subscription", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return { subscription: await effectiveSubscription(core, app, tenantId) };
  });
  router.get("/api/v1/billing/entitlements", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return { entitlements: await effectiveEntitlements(core, app, tenantId) };
  });
  router.get("/api/v1/billing/usage/:featureKey", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const query = parseInput(UsageQuery, getQuery(event), "query");
    return readUsage(core, app, tenantId, featureKey(event), query.period);
  });
  router.post(
    "/api/v1/billing/usage/:featureKey/increment",
    tenantRoute(core, (event, auth) => {
      const key = featureKey(event);
      return readJson(event, IncrementBody, core.config.maxJsonBytes, (body): Awaitable<unknown> => {
        // With an Idempotency-Key, a batch of one: its answer is kept with the increment (src/data/idempotency.ts).
        const idempotency = idempotencyKeyOf(event);
        if (idempotency === undefined) return incrementUsage(core, auth.app, auth.tenantId, key, body);
        return idempotentWrite(core, event, auth, idempotency, `POST ${event.url.pathname}\n${JSON.stringify(body)}`, [{ op: "increment", featureKey: key, ...body }], true);
      });
    }),
  );

  // Register https://<public url>/api/v1/billing/stripe/webhook/<app id> in Stripe's dashboard.
  router.post("/api/v1/billing/stripe/webhook/:appId", async (event) => {
    const raw = await readLimited(event, core.config.maxJsonBytes);
    if (!raw) throw fail("invalid_request", "Empty body: this endpoint takes Stripe's signed event JSON.");
    return handleStripeWebhook(core, getRouterParam(event, "appId") ?? "", raw, event.req.headers.get("stripe-signature"));
  });

  registerBillingDevRoutes(router, core);
  registerBillingAdminRoutes(router, core);
}
