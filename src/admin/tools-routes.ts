import * as v from "valibot";
import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput } from "../http/body.ts";
import { requireDeveloper, requireOwnApp } from "../http/guards.ts";
import { enqueueEvent } from "../webhooks/events.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";

/**
 * The test event's name. Receivers ignore event names they do not know (spec), so a test
 * delivery proves the URL and signature without making any receiver act.
 */
export const TEST_EVENT = "webhook.test";

export const OutboxQuery = v.object({
  limit: v.optional(v.pipe(v.string("limit must appear once"), v.regex(/^\d{1,4}$/, "limit must be a whole number"), v.transform(Number), v.minValue(1, "limit must be at least 1"), v.maxValue(200, "limit must be at most 200")), "50"),
});

/** Developer tools: the webhook test event and the development outbox. */
export function registerToolsAdminRoutes(router: Router, core: Core): void {
  const ownApp = async (event: H3Event) => {
    const { developer } = await requireDeveloper(event, core);
    return requireOwnApp(core, developer, getRouterParam(event, "appId"));
  };

  router.post("/api/v1/admin/apps/:appId/event-webhook-config/test", async (event) => {
    const app = await ownApp(event);
    if (!(await core.db.webhooks.findConfig(app.id))) throw fail("not_found", "This app has no webhook URL yet: set one first (PUT …/event-webhook-config with { url }).");
    await enqueueEvent(core, { appId: app.id, event: TEST_EVENT, tenantId: null, email: null, payload: { test: true, message: "A test event from the tenantd dashboard. Receivers ignore unknown event names." } });
    event.res.status = 202;
    return { ok: true, event: TEST_EVENT };
  });

  router.get("/api/v1/admin/apps/:appId/outbox", async (event) => {
    const app = await ownApp(event);
    if (core.config.email.transport !== "outbox") {
      throw fail("not_found", "The development outbox exists only while email goes to the outbox (development mode); this server sends email over SMTP.");
    }
    const q = parseInput(OutboxQuery, getQuery(event), "query");
    const messages = await core.db.outbox.list({ appId: app.id, limit: q.limit });
    return {
      messages: messages.map((m) => ({ id: m.id, kind: m.kind, to: m.to, subject: m.subject, locale: m.locale, link: m.link, text: m.text, tenantId: m.tenantId, createdAt: toIso(m.createdAt)! })),
    };
  });
}
