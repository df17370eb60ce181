import type { Core } from "./core.ts";
import type { Router } from "./http/router.ts";
import { registerAuthRoutes } from "./auth/routes.ts";
import { registerAdminRoutes } from "./admin/routes.ts";
import { registerDataRoutes } from "./data/routes.ts";
import { registerFilesRoutes } from "./files/routes.ts";
import { registerBillingRoutes } from "./billing/routes.ts";
import { registerWebhooksRoutes } from "./webhooks/routes.ts";
import { registerAccountRoutes } from "./account/routes.ts";
import { registerOAuthRoutes } from "./oauth/routes.ts";
import { registerInvitesRoutes } from "./invites/routes.ts";
import { registerFamilyRoutes } from "./family/routes.ts";
import { registerOpenApiRoutes } from "./openapi/routes.ts";
import { registerLandingRoute } from "./http/landing.ts";
import { registerAuditRoutes } from "./audit/routes.ts";
import { registerExportRoutes } from "./export/routes.ts";
import { registerOrgRoutes } from "./orgs/routes.ts";
import { registerRealtimeRoutes } from "./realtime/routes.ts";
import { registerAdminLiveRoute } from "./realtime/admin-live.ts";

/** Every area's HTTP routes. */
export function registerAreaRoutes(router: Router, core: Core): void {
  registerAuthRoutes(router, core);
  registerDataRoutes(router, core);
  registerFilesRoutes(router, core);
  registerBillingRoutes(router, core);
  registerAccountRoutes(router, core);
  registerOAuthRoutes(router, core);
  registerInvitesRoutes(router, core);
  registerFamilyRoutes(router, core);
  registerWebhooksRoutes(router, core);
  registerAdminRoutes(router, core);
  registerAuditRoutes(router, core);
  registerExportRoutes(router, core);
  registerOrgRoutes(router, core);
  registerRealtimeRoutes(router, core);
  registerAdminLiveRoute(router, core);
  registerOpenApiRoutes(router, core);
  registerLandingRoute(router);
}
