import * as v from "valibot";
import { getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { readJson, parseInput } from "../http/body.ts";
import { clientIp, noStore, requireDeveloper, requireOwnApp } from "../http/guards.ts";
import { enforceRateLimit } from "../http/rate-limit.ts";
import { createApp, deleteApp, rotatePublishableKey, rotateSecretKey, toPublicApp, updateApp, AppNameSchema } from "../apps/service.ts";
import { developerUsage, loginDeveloper, toPublicDeveloper } from "./developers.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { isPlainObject, type JsonObject } from "../tools/merge-patch.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { registerTenantAdminRoutes } from "./tenant-routes.ts";
import { registerToolsAdminRoutes } from "./tools-routes.ts";
import { auditRequest } from "../audit/http.ts";
import { appChanges } from "../audit/actions.ts";
import { registerDashboardToolRoutes } from "./dashboard-tools.ts";
import { registerImpersonationRoutes } from "./impersonation.ts";
import { registerBackupRoutes } from "./backups.ts";

export const LoginBody = v.object({ email: v.pipe(v.string(), v.trim(), v.toLowerCase()), password: v.string() });
export const CreateAppBody = v.strictObject({ name: AppNameSchema, settings: v.optional(v.unknown()) });
export const UpdateAppBody = v.strictObject({
  name: v.optional(AppNameSchema),
  settings: v.optional(v.custom<JsonObject>(isPlainObject, "settings must be an object (a JSON merge patch)")),
});

export function registerAdminRoutes(router: Router, core: Core): void {
  const ownApp = async (event: H3Event) => {
    const { developer } = await requireDeveloper(event, core);
    return requireOwnApp(core, developer, getRouterParam(event, "appId"));
  };

  router.post("/api/v1/developer/login", async (event) => {
    const body = await readJson(event, LoginBody, core.config.maxJsonBytes);
    noStore(event);
    await enforceRateLimit(event, core, "developer-login", { email: body.email });
    return loginDeveloper(core, body.email, body.password, clientIp(event, core));
  });
  router.post("/api/v1/developer/logout", async (event) => {
    const { tokenHash } = await requireDeveloper(event, core);
    await core.db.developers.endSession(tokenHash);
    event.res.status = 204;
    return null;
  });
  router.get("/api/v1/developer/me", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    return { developer: toPublicDeveloper(developer) };
  });
  router.get("/api/v1/developer/usage", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    return developerUsage(core, developer);
  });

  router.get("/api/v1/admin/apps", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    return { apps: (await core.db.apps.list(developer.id)).map(toPublicApp) };
  });
  router.post("/api/v1/admin/apps", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const body = await readJson(event, CreateAppBody, core.config.maxJsonBytes);
    const app = await createApp(core, { name: body.name, ownerId: developer.id, settings: body.settings });
    await auditRequest(core, event, { appId: app.id, action: "app.created", details: { name: app.name } });
    event.res.status = 201;
    return { app: toPublicApp(app) };
  });
  router.get("/api/v1/admin/apps/:appId", async (event) => ({ app: toPublicApp(await ownApp(event)) }));
  router.patch("/api/v1/admin/apps/:appId", async (event) => {
    const app = await ownApp(event);
    const body = await readJson(event, UpdateAppBody, core.config.maxJsonBytes);
    const updated = await updateApp(core, app, body);
    await auditRequest(core, event, { appId: app.id, action: "app.updated", details: appChanges(body) });
    return { app: toPublicApp(updated) };
  });
  router.delete("/api/v1/admin/apps/:appId", async (event) => {
    const app = await ownApp(event);
    await deleteApp(core, app);
    await auditRequest(core, event, { appId: app.id, action: "app.deleted", details: { name: app.name } });
    event.res.status = 204;
    return null;
  });
  router.post("/api/v1/admin/apps/:appId/secret-key", async (event) => {
    const app = await ownApp(event);
    const secretKey = await rotateSecretKey(core, app);
    await auditRequest(core, event, { appId: app.id, action: "app.secret_key_rotated" });
    return { secretKey };
  });
  router.post("/api/v1/admin/apps/:appId/rotate-key", async (event) => {
    const app = await rotatePublishableKey(core, await ownApp(event));
    await auditRequest(core, event, { appId: app.id, action: "app.publishable_key_rotated" });
    return { app: toPublicApp(app) };
  });

  router.get("/api/v1/admin/apps/:appId/tenants/:tenantId", async (event) => {
    const app = await ownApp(event);
    const tenant = await requireTenantRef(core, app, decodeURIComponent(getRouterParam(event, "tenantId") ?? ""));
    return { tenant: toPublicTenant(tenant) };
  });
  registerTenantAdminRoutes(router, core);
  registerToolsAdminRoutes(router, core);
  registerDashboardToolRoutes(router, core);
  registerImpersonationRoutes(router, core);
  registerBackupRoutes(router, core);
}
