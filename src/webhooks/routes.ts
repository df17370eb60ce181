import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson } from "../http/body.ts";
import { requireDeveloper, requireOwnApp } from "../http/guards.ts";
import { WebhookUrlBody, getWebhookConfig, removeWebhookConfig, rotateWebhookSecret, setWebhookUrl } from "./config.ts";
import { DeliveryListQuery, getDelivery, listDeliveries } from "./deliveries.ts";
import { startDispatcher } from "./dispatcher.ts";
import { auditRequest } from "../audit/http.ts";

/** Webhook configuration and delivery log (developer session), and the server's dispatcher. */
export function registerWebhooksRoutes(router: Router, core: Core): void {
  // Only a server registers routes, so only a server dispatches; the CLI just queues.
  const dispatcher = startDispatcher(core);
  core.onClose(() => dispatcher.stop());

  const ownApp = async (event: H3Event) => {
    const { developer } = await requireDeveloper(event, core);
    return requireOwnApp(core, developer, getRouterParam(event, "appId"));
  };
  const base = "/api/v1/admin/apps/:appId/event-webhook-config";

  router.put(base, async (event) => {
    const app = await ownApp(event);
    const body = await readJson(event, WebhookUrlBody, core.config.maxJsonBytes);
    const result = await setWebhookUrl(core, app, body.url);
    await auditRequest(core, event, { appId: app.id, action: "webhook.url_set", details: { url: body.url } });
    return result;
  });
  router.get(base, async (event) => getWebhookConfig(core, await ownApp(event)));
  router.delete(base, async (event) => {
    const app = await ownApp(event);
    await removeWebhookConfig(core, app);
    await auditRequest(core, event, { appId: app.id, action: "webhook.removed" });
    event.res.status = 204;
    return null;
  });
  router.post(`${base}/rotate-secret`, async (event) => {
    const app = await ownApp(event);
    const result = await rotateWebhookSecret(core, app);
    await auditRequest(core, event, { appId: app.id, action: "webhook.secret_rotated" });
    return result;
  });
  router.get("/api/v1/admin/apps/:appId/webhook-deliveries", async (event) => {
    const app = await ownApp(event);
    return listDeliveries(core, app, parseInput(DeliveryListQuery, getQuery(event), "query"));
  });
  router.get("/api/v1/admin/apps/:appId/webhook-deliveries/:deliveryId", async (event) => {
    const app = await ownApp(event);
    return getDelivery(core, app, getRouterParam(event, "deliveryId") ?? "");
  });
}
