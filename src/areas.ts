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
import { registerLandingRoute } from "./http/landing.ts";
import { installAuth } from "./auth/install.ts";
import { installData } from "./data/install.ts";
import { installFiles } from "./files/install.ts";
import { installBilling } from "./billing/install.ts";
import { installWebhooks } from "./webhooks/install.ts";
import { installAccount } from "./account/install.ts";
import { installOAuth } from "./oauth/install.ts";
import { installFamily } from "./family/install.ts";

/** Wires every area's hooks into the core. Called by createCore, so the CLI gets them too. */
export function installAreas(core: Core): void {
  installAuth(core);
  installData(core);
  // Order matters for "tenant.deleting", whose handlers run in this order: billing cancels
  // the Stripe subscription (may fail: then nothing is deleted yet) before files removes
  // blobs, which cannot be undone.
  installBilling(core);
  installFiles(core);
  installWebhooks(core);
  installAccount(core);
  installOAuth(core);
  installFamily(core);
}

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
  registerLandingRoute(router);
}
