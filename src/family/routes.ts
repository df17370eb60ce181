import * as v from "valibot";
import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { readJson } from "../http/body.ts";
import { requireApp, noStore, requireTenant } from "../http/guards.ts";
import { enforceRateLimit } from "../http/rate-limit.ts";
import { bodyObject, CreateInviteBody } from "../invites/shape.ts";
import { createFamilyInvite, listFamilyInvites, revokeFamilyInvite } from "./invites.ts";
import { leaveFamily, listMembers, removeMember } from "./members.ts";
import { ConsumeBody, ReplaceBody, consumeFamilyInvite, replaceWithFamily } from "./join.ts";

export const RemoveMemberBody = v.object({ member_tenant_id: v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(100)) });
export const NoBody = bodyObject({});

/** Family plans: the owner's invites and members, a member's leave, and the two ways to join. */
export function registerFamilyRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;

  router.post("/api/v1/auth/family-invite/consume", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, ConsumeBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "signup", { appId: app.id, email: body.email });
    const outcome = await consumeFamilyInvite(core, app, body);
    if (outcome.result === "new") event.res.status = 201;
    return outcome;
  });

  router.post("/api/v1/tenants/me/replace-with-family", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const body = await readJson(event, ReplaceBody, limit);
    noStore(event);
    return replaceWithFamily(core, app, tenantId, body.token);
  });

  router.post("/api/v1/tenants/me/family-invites", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const created = await createFamilyInvite(core, app, tenantId, await readJson(event, CreateInviteBody, limit));
    event.res.status = 201;
    return created;
  });

  router.get("/api/v1/tenants/me/family-invites", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return listFamilyInvites(core, app, tenantId);
  });

  router.delete("/api/v1/tenants/me/family-invites/:id", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return revokeFamilyInvite(core, app, tenantId, getRouterParam(event, "id") ?? "");
  });

  router.get("/api/v1/tenants/me/family/members", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return listMembers(core, app, tenantId);
  });

  router.post("/api/v1/tenants/me/family/remove-member", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const body = await readJson(event, RemoveMemberBody, limit);
    return removeMember(core, app, tenantId, body.member_tenant_id);
  });

  router.post("/api/v1/tenants/me/family/leave", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    await readJson(event, NoBody, limit);
    return leaveFamily(core, app, tenantId);
  });
}
