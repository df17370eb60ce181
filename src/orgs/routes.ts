import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson } from "../http/body.ts";
import { noStore, requireDeveloper, requireOwnApp, requireTenant } from "../http/guards.ts";
import { AdminOrgsQuery, adminOrgPage, deleteAppOrg, listAppOrgs, tenantOrgs } from "./admin.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { requestOrigin } from "../audit/http.ts";
import { NoBody } from "../family/routes.ts";
import { createOrg, deleteOrg, getOrg, listOrgs, OrgBody, renameOrg, transferOrg, TransferBody } from "./orgs.ts";
import { changeRole, leaveOrg, listMembers, MembersQuery, removeMember, RoleBody } from "./members.ts";
import { registerOrgRecordRoutes } from "./records.ts";
import { AcceptBody, acceptOrgInvite, createOrgInvite, listOrgInvites, OrgInviteBody, revokeOrgInvite } from "./invites.ts";
import { registerOrgBillingRoutes } from "./billing-routes.ts";

/** Organizations, for their members (docs/organizations.md). Every route needs the tenant bearer. */
export function registerOrgRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;
  const param = (event: H3Event, name: string) => getRouterParam(event, name) ?? "";
  /** The signed-in tenant, as the actor the trail names. */
  const signedIn = async (event: H3Event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return { app, actor: { tenantId, origin: requestOrigin(event, core) } };
  };

  router.post("/api/v1/orgs", async (event) => {
    const { app, actor } = await signedIn(event);
    const body = await readJson(event, OrgBody, limit);
    event.res.status = 201;
    return createOrg(core, app, actor, body.name);
  });

  router.get("/api/v1/orgs", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return listOrgs(core, app, tenantId);
  });

  router.get("/api/v1/orgs/:orgId", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return getOrg(core, app, tenantId, param(event, "orgId"));
  });

  router.patch("/api/v1/orgs/:orgId", async (event) => {
    const { app, actor } = await signedIn(event);
    const body = await readJson(event, OrgBody, limit);
    return renameOrg(core, app, actor, param(event, "orgId"), body.name);
  });

  router.delete("/api/v1/orgs/:orgId", async (event) => {
    const { app, actor } = await signedIn(event);
    await deleteOrg(core, app, actor, param(event, "orgId"));
    event.res.status = 204;
    return null;
  });

  router.post("/api/v1/orgs/:orgId/transfer", async (event) => {
    const { app, actor } = await signedIn(event);
    const body = await readJson(event, TransferBody, limit);
    return transferOrg(core, app, actor, param(event, "orgId"), body.tenantId);
  });

  router.get("/api/v1/orgs/:orgId/members", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return listMembers(core, app, tenantId, param(event, "orgId"), parseInput(MembersQuery, getQuery(event), "query"));
  });

  router.patch("/api/v1/orgs/:orgId/members/:tenantId", async (event) => {
    const { app, actor } = await signedIn(event);
    const body = await readJson(event, RoleBody, limit);
    return changeRole(core, app, actor, param(event, "orgId"), param(event, "tenantId"), body.role);
  });

  router.delete("/api/v1/orgs/:orgId/members/:tenantId", async (event) => {
    const { app, actor } = await signedIn(event);
    await removeMember(core, app, actor, param(event, "orgId"), param(event, "tenantId"));
    event.res.status = 204;
    return null;
  });

  router.post("/api/v1/orgs/invites/accept", async (event) => {
    const { app, actor } = await signedIn(event);
    const body = await readJson(event, AcceptBody, limit);
    noStore(event);
    return acceptOrgInvite(core, app, actor, body.token);
  });

  router.post("/api/v1/orgs/:orgId/invites", async (event) => {
    const { app, actor } = await signedIn(event);
    const body = await readJson(event, OrgInviteBody, limit);
    noStore(event);
    event.res.status = 201;
    return createOrgInvite(core, app, actor, param(event, "orgId"), body);
  });

  router.get("/api/v1/orgs/:orgId/invites", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return listOrgInvites(core, app, tenantId, param(event, "orgId"));
  });

  router.delete("/api/v1/orgs/:orgId/invites/:inviteId", async (event) => {
    const { app, actor } = await signedIn(event);
    await revokeOrgInvite(core, app, actor, param(event, "orgId"), param(event, "inviteId"));
    event.res.status = 204;
    return null;
  });

  router.post("/api/v1/orgs/:orgId/leave", async (event) => {
    const { app, actor } = await signedIn(event);
    await readJson(event, NoBody, limit);
    await leaveOrg(core, app, actor, param(event, "orgId"));
    event.res.status = 204;
    return null;
  });

  // The developer's view of an app's organizations (admin API, developer session).
  router.get("/api/v1/admin/apps/:appId/orgs", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    return listAppOrgs(core, app, parseInput(AdminOrgsQuery, getQuery(event), "query"));
  });

  router.get("/api/v1/admin/apps/:appId/orgs/:orgId", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    return adminOrgPage(core, app, param(event, "orgId"), parseInput(MembersQuery, getQuery(event), "query"));
  });

  router.delete("/api/v1/admin/apps/:appId/orgs/:orgId", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    await deleteAppOrg(core, app, param(event, "orgId"), { tenantId: null, developerId: developer.id, origin: requestOrigin(event, core) });
    event.res.status = 204;
    return null;
  });

  router.get("/api/v1/admin/apps/:appId/tenants/:tenantId/orgs", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    const tenant = await requireTenantRef(core, app, decodeURIComponent(param(event, "tenantId")));
    return tenantOrgs(core, app, tenant.id);
  });

  registerOrgBillingRoutes(router, core);
  registerOrgRecordRoutes(router, core);
}
