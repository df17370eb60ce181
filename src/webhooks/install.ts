import type { Core } from "../core.ts";
import { toIso } from "../clock.ts";
import { enqueueEvent } from "./events.ts";

/** Turns the areas' hooks into queued webhook events; runs for the server and the CLI alike. */
export function installWebhooks(core: Core): void {
  core.hooks.on("tenant.deleted", ({ app, tenantId, email, locale, reason }) =>
    enqueueEvent(core, { appId: app.id, event: "tenant.deleted", tenantId, email, payload: { reason, locale } }),
  );
  core.hooks.on("tenant.verificationResent", ({ app, tenant, verifyToken, verifyUrl, expiresAt }) =>
    enqueueEvent(core, {
      appId: app.id,
      event: "tenant.email.resend_verification",
      tenantId: tenant.id,
      email: tenant.email,
      payload: { verifyToken, verifyUrl, expiresAt: toIso(expiresAt) },
    }),
    { internal: true },
  );
}
