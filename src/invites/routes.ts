import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { readJson } from "../http/body.ts";
import { requireTenant } from "../http/guards.ts";
import { CreateInviteBody } from "./shape.ts";
import { createInviteToken, deleteInviteToken, listInviteTokens } from "./tokens.ts";

/** A tenant's invite tokens: create (plaintext once), list, delete an unused one. */
export function registerInvitesRoutes(router: Router, core: Core): void {
  router.post("/api/v1/tenants/me/invite-tokens", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const created = await createInviteToken(core, app, tenantId, await readJson(event, CreateInviteBody, core.config.maxJsonBytes));
    event.res.status = 201;
    return created;
  });

  router.get("/api/v1/tenants/me/invite-tokens", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return listInviteTokens(core, app, tenantId);
  });

  router.delete("/api/v1/tenants/me/invite-tokens/:id", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return deleteInviteToken(core, app, tenantId, getRouterParam(event, "id") ?? "");
  });
}
