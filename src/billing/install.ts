import type { Core } from "../core.ts";
import { startSignupTrial } from "./grants.ts";
import { cancelStripeSubscriptionOf } from "./stripe-sync.ts";

/** Hooks and settings reactions of the billing area; runs for the server and the CLI alike. */
export function installBilling(core: Core): void {
  core.hooks.on("tenant.created", ({ app, tenant }) => startSignupTrial(core, app, tenant.id));
  // Before the rows go: the subscription id is still known and Stripe must stop charging.
  core.hooks.on("tenant.deleting", ({ app, tenantId }) => cancelStripeSubscriptionOf(core, app, tenantId));
}
