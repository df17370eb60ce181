import * as v from "valibot";
import { getQuery, getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput } from "../http/body.ts";
import { clientIp, requireDeveloper, requireOwnApp } from "../http/guards.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { recordScope } from "../data/records.ts";
import { asTenant } from "../admin/tenant-routes.ts";
import { fail } from "../errors.ts";
import { SSE_HEADERS } from "./routes.ts";

export const AdminLiveQuery = v.object({ filter: v.optional(v.string("filter must appear once")) });

/**
 * A developer's live view of one tenant's collection (the dashboard's records browser): an
 * SSE stream on the realtime hub under the developer session, with its one subscription
 * fixed when it opens. The reads are the admin records route's: the developer's own app, a
 * tenant of it, a valid collection. The stream ends within a tick of the developer session
 * ending, the app changing hands or the tenant's deletion (hub.ts, endedWhy).
 */
export function registerAdminLiveRoute(router: Router, core: Core): void {
  router.get("/api/v1/admin/apps/:appId/tenants/:tenantId/records/:collection/live", async (event) => {
    const { developer, tokenHash } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    const tenant = await requireTenantRef(core, app, decodeURIComponent(getRouterParam(event, "tenantId") ?? ""));
    const collection = getRouterParam(event, "collection") ?? "";
    recordScope(asTenant(app, tenant), collection); // the collection name checked exactly as the list checks it
    const { filter } = parseInput(AdminLiveQuery, getQuery(event), "query");
    const hub = core.realtime;
    if (!hub) throw fail("unavailable", "Realtime is not running in this process.");
    const specs = [{ id: "live", collection, ...(filter ? { filter } : {}) }];
    const refused = hub.check(specs);
    if (refused) throw fail(refused.refused.code, refused.refused.message);
    const owner = { appId: app.id, tenantId: tenant.id, sessionId: tokenHash, ip: clientIp(event, core), developerId: developer.id };
    const opened = await hub.open(owner, event.req.headers.get("last-event-id") ?? undefined, specs);
    if ("limit" in opened) throw fail("rate_limited", opened.limit, { "retry-after": "5" });
    return new Response(opened, { headers: SSE_HEADERS });
  });
}
