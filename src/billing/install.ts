import type { Core } from "../core.ts";
import { startSignupTrial } from "./grants.ts";
import { cancelOrgStripeSubscription, cancelStripeSubscriptionOf } from "./stripe-sync.ts";

/** Hooks and settings reactions of the billing area; runs for the server and the CLI alike. */
export function installBilling(core: Core): void {
  core.hooks.on("tenant.created", ({ app, tenant }) => startSignupTrial(core, app, tenant.id));
  // Before the rows go: the subscription id is still known and Stripe must stop charging.
  core.hooks.on("tenant.deleting", ({ app, tenantId }) => cancelStripeSubscriptionOf(core, app, tenantId));
  // An organization the tenant is alone in goes with the account (src/orgs/install.ts): its subscription stops first.
  core.hooks.on("tenant.deleting", async ({ app, tenantId }) => {
    for (const org of await core.db.orgs.forTenant(app.id, tenantId)) {
      if ((await core.db.orgs.seatCounts(app.id, org.id, core.clock())).members === 1) await cancelOrgStripeSubscription(core, app, org.id);
    }
  });
}
