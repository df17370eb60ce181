import * as v from "valibot";
import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson } from "../http/body.ts";
import { requireDeveloper } from "../http/guards.ts";
import { adminLookups, asTenant } from "./tenant-routes.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { createRecord, deleteRecord, listRecordRows, listRequest, toPublicRecord, updateRecord } from "../data/records.ts";
import { DataBody } from "../data/routes.ts";
import { getDelivery } from "../webhooks/deliveries.ts";
import { enqueueEvent, type WebhookEventName } from "../webhooks/events.ts";
import { createEmailTransport } from "../email/transport.ts";
import { renderEmail, type EmailKind } from "../email/templates.ts";
import { emailLink } from "../email/tenant-email.ts";
import { EmailSchema } from "./developers.ts";
import { CreateTenantBody, createTenantAsDeveloper, markTenantVerified, setTenantSignIn } from "./tenant-actions.ts";
import { clientIp } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { recentAccess } from "./access-log.ts";

/** At most this many records go in one bulk delete; a larger selection is narrowed first. */
export const BULK_DELETE_MAX = 1000;
const LOCALES = ["en", "es", "nl"] as const;
const KINDS: EmailKind[] = ["verify", "reset"];

export const BulkDeleteBody = v.strictObject({
  filter: v.optional(v.string("filter must be JSON text, as in the list's filter")),
  /** the number of records the filter matches, as the developer typed it: a changed selection is refused */
  confirm: v.pipe(v.number("confirm must be the number of records to delete"), v.integer(), v.minValue(1)),
});
export const EmailTestBody = v.strictObject({ to: EmailSchema });
export const AccessLogQuery = v.object({
  status: v.optional(v.picklist(["2", "3", "4", "5"], "status must be 2, 3, 4 or 5 (the status class)")),
  limit: v.optional(v.pipe(v.string("limit must appear once"), v.regex(/^\d{1,3}$/, "limit must be a whole number"), v.transform(Number), v.minValue(1, "limit must be at least 1"), v.maxValue(500, "limit must be at most 500")), "100"),
});


/**
 * The dashboard's tools beyond looking: create a tenant or vouch for an address, edit a
 * tenant's records, send the same webhook event again, and see or try the app's emails.
 */
export function registerDashboardToolRoutes(router: Router, core: Core): void {
  const appAdmin = "/api/v1/admin/apps/:appId";
  const tenantAdmin = `${appAdmin}/tenants/:tenantId`;
  const { ownApp, tenantOf } = adminLookups(core);
  const param = (event: H3Event, name: string) => decodeURIComponent(getRouterParam(event, name) ?? "");
  const limit = core.config.maxJsonBytes;

  router.post(`${appAdmin}/tenants`, async (event) => {
    const app = await ownApp(event);
    const tenant = await createTenantAsDeveloper(core, app, await readJson(event, CreateTenantBody, limit));
    event.res.status = 201;
    return { tenant: toPublicTenant(tenant) };
  });
  router.post(`${tenantAdmin}/verify`, async (event) => {
    const { tenant } = await tenantOf(event);
    return { tenant: toPublicTenant(await markTenantVerified(core, tenant)) };
  });

  for (const [action, enabled] of [["disable", false], ["enable", true]] as const) {
    router.post(`${tenantAdmin}/sign-in/${action}`, async (event) => {
      const { developer } = await requireDeveloper(event, core);
      const { app, tenant } = await tenantOf(event);
      return setTenantSignIn(core, app, tenant, enabled, { developerId: developer.id, ip: clientIp(event, core) });
    });
  }

  router.post(`${tenantAdmin}/records/:collection`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const body = await readJson(event, DataBody, limit);
    event.res.status = 201;
    return { record: toPublicRecord(await createRecord(core, asTenant(app, tenant), param(event, "collection"), body.data)) };
  });
  router.put(`${tenantAdmin}/records/:collection/:recordId`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const body = await readJson(event, DataBody, limit);
    return { record: toPublicRecord(await updateRecord(core, asTenant(app, tenant), param(event, "collection"), param(event, "recordId"), body.data)) };
  });
  router.delete(`${tenantAdmin}/records/:collection/:recordId`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    await deleteRecord(core, asTenant(app, tenant), param(event, "collection"), param(event, "recordId"));
    event.res.status = 204;
    return null;
  });
  // The selection is the list's own filter; `confirm` must match its size now, so a typed
  // count deletes exactly what the developer saw.
  router.post(`${tenantAdmin}/records/:collection/bulk-delete`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const body = await readJson(event, BulkDeleteBody, limit);
    const auth = asTenant(app, tenant);
    const collection = param(event, "collection");
    const page = await listRecordRows(core, auth, collection, listRequest({ filter: body.filter, limit: BULK_DELETE_MAX, offset: 0 }));
    if (page.total > BULK_DELETE_MAX) throw fail("invalid_request", `The filter matches ${page.total} records; one bulk delete takes at most ${BULK_DELETE_MAX}. Narrow the filter.`);
    if (page.total !== body.confirm) throw fail("conflict", `The filter now matches ${page.total} records, not ${body.confirm}: look at the list again and confirm that number.`);
    for (const row of page.rows) await deleteRecord(core, auth, collection, row.id);
    return { deleted: page.rows.length };
  });

  router.post(`${appAdmin}/webhook-deliveries/:deliveryId/redeliver`, async (event) => {
    const app = await ownApp(event);
    const delivery = await getDelivery(core, app, param(event, "deliveryId"));
    if (delivery.body === null) throw fail("gone", `Delivery ${delivery.id} has no stored body to send again: ${delivery.bodyNote}`);
    const sent = JSON.parse(delivery.body) as { event: WebhookEventName; tenantId: string | null; email: string | null; payload: Record<string, unknown> };
    // A new event with the same content: receivers see a fresh id, timestamp and signature.
    await enqueueEvent(core, { appId: app.id, event: sent.event, tenantId: sent.tenantId ?? null, email: sent.email ?? null, payload: sent.payload ?? {} });
    event.res.status = 202;
    return { ok: true, event: sent.event };
  });

  router.get(`${appAdmin}/access-log`, async (event) => {
    const app = await ownApp(event);
    const q = parseInput(AccessLogQuery, getQuery(event), "query");
    return recentAccess(core, app.id, { statusClass: q.status, limit: q.limit });
  });

  router.get(`${appAdmin}/email/previews`, async (event) => {
    const app = await ownApp(event);
    const appName = app.settings.email.appName ?? app.name;
    const previews = KINDS.flatMap((kind) =>
      LOCALES.map((locale) => {
        const link = emailLink(core, app, kind, "PREVIEW-TOKEN");
        const { subject, text } = renderEmail(kind, locale, { appName, link });
        return { kind, locale, subject, text, link };
      }),
    );
    return { from: app.settings.email.from ?? core.config.email.from, transport: core.config.email.transport, previews };
  });
  // Sent now, not queued: the developer sees the transport's own error if it fails.
  router.post(`${appAdmin}/email/test`, async (event) => {
    const app = await ownApp(event);
    const { to } = await readJson(event, EmailTestBody, limit);
    const link = emailLink(core, app, "verify", "TEST-TOKEN");
    const { subject, text, html } = renderEmail("verify", "en", { appName: app.settings.email.appName ?? app.name, link });
    const transport = await createEmailTransport(core);
    try {
      await transport.send({ appId: app.id, tenantId: null, kind: "verify", locale: "en", from: app.settings.email.from ?? core.config.email.from, to, subject: `[test] ${subject}`, text, html, link });
    } catch (e) {
      throw fail("provider_error", `The email transport (${core.config.email.transport}) refused the test email: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      transport.close();
    }
    return { ok: true, to, transport: core.config.email.transport };
  });
}
