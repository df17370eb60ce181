import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { readJson } from "../http/body.ts";
import { noStore, requireApp, requireTenant } from "../http/guards.ts";
import { enforceRateLimit } from "../http/rate-limit.ts";
import { toPublicTenant } from "./tenant-view.ts";
import { auditSignedIn } from "../audit/http.ts";
import { AnonymousBody, issueUpgradeToken, signInAnonymously, UpgradeBody, upgradeWithPassword } from "./anonymous.ts";

export function registerAnonymousRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;

  router.post("/api/v1/auth/anonymous", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, AnonymousBody, limit);
    noStore(event);
    // Each call makes a tenant: counted per IP like sign-up.
    await enforceRateLimit(event, core, "anonymous", { appId: app.id });
    const { tenant, ...tokens } = await signInAnonymously(core, app, body.locale);
    await auditSignedIn(core, event, app.id, tenant.id, "anonymous");
    event.res.status = 201;
    return { tenant: toPublicTenant(tenant), anonymous: true, ...tokens };
  });

  router.post("/api/v1/auth/anonymous/upgrade", async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, UpgradeBody, limit);
    await enforceRateLimit(event, core, "signup", { appId: auth.app.id, email: body.email });
    return { tenant: toPublicTenant(await upgradeWithPassword(core, auth.app, auth.tenantId, body)) };
  });

  router.post("/api/v1/auth/anonymous/upgrade-token", async (event) => {
    const auth = await requireTenant(event, core);
    noStore(event);
    return issueUpgradeToken(core, auth.app, auth.tenantId);
  });
}
