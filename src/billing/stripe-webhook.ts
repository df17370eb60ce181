import type Stripe from "stripe";
import type { Core } from "../core.ts";
import { fail } from "../errors.ts";
import { META, refreshStripeSubscription } from "./stripe-sync.ts";
import { loadStripe } from "./stripe.ts";
import type { AppRow } from "../db/types.ts";
import { openAppSecret } from "../apps/settings.ts";

const idOf = (ref: string | { id: string } | null | undefined): string | undefined => (typeof ref === "string" ? ref : ref?.id);

/**
 * The per-app Stripe webhook: verify the signature over the raw body (nothing happens on a
 * bad one), skip events already handled, then dispatch by type. Unknown types are
 * acknowledged and ignored so Stripe stops resending them.
 */
export async function handleStripeWebhook(core: Core, appId: string, rawBody: string, signature: string | null): Promise<{ received: true; duplicate: boolean }> {
  const app = await core.db.apps.findById(appId);
  if (!app) throw fail("not_found", `No app ${appId}: check the webhook URL registered in Stripe.`);
  const sealed = app.settings.billing.stripeWebhookSecret;
  if (!sealed) throw fail("invalid_request", "This app has no Stripe webhook secret: set settings.billing.stripeWebhookSecret (whsec_…) first.");
  if (!signature) throw fail("invalid_signature", "Missing stripe-signature header.");
  let event: Stripe.Event;
  try {
    event = loadStripe().webhooks.constructEvent(rawBody, signature, openAppSecret(core.secrets, sealed, app.id), undefined, undefined, core.clock());
  } catch {
    throw fail("invalid_signature", "The stripe-signature does not match this app's webhook secret, or its timestamp is too old.");
  }
  if (await core.db.billing.stripeEventSeen(app.id, event.id)) return { received: true, duplicate: true };
  await dispatch(core, app, event);
  // Recorded only after it was handled: a failure answers 5xx and Stripe retries it.
  await core.db.billing.recordStripeEvent(app.id, event.id, event.type, core.clock());
  return { received: true, duplicate: false };
}

async function dispatch(core: Core, app: AppRow, event: Stripe.Event): Promise<void> {
  switch (event.type) {
    case "checkout.session.completed":
      return checkoutCompleted(core, app, event.data.object);
    case "customer.subscription.created":
    case "customer.subscription.updated":
    case "customer.subscription.deleted":
      return refreshStripeSubscription(core, app, event.data.object.id);
    case "invoice.payment_failed": {
      const invoice = event.data.object;
      const subscriptionId = idOf(invoice.parent?.subscription_details?.subscription);
      if (subscriptionId) await refreshStripeSubscription(core, app, subscriptionId);
      return;
    }
    default:
      return;
  }
}

async function checkoutCompleted(core: Core, app: AppRow, session: Stripe.Checkout.Session): Promise<void> {
  const subscriptionId = idOf(session.subscription);
  if (session.mode !== "subscription" || !subscriptionId) return;
  const forApp = session.metadata?.[META.app];
  if (forApp && forApp !== app.id) return;
  const customerId = idOf(session.customer);
  const orgId = session.metadata?.[META.org];
  if (orgId) {
    if (customerId && (await core.db.orgs.byId(app.id, orgId))) await core.db.orgBilling.saveStripeCustomer(app.id, orgId, customerId, core.clock());
    return refreshStripeSubscription(core, app, subscriptionId, { orgId });
  }
  const tenantId = session.client_reference_id ?? session.metadata?.[META.tenant] ?? undefined;
  if (tenantId && customerId && (await core.db.tenants.findById(app.id, tenantId))) {
    await core.db.billing.saveStripeCustomer(app.id, tenantId, customerId, core.clock());
  }
  await refreshStripeSubscription(core, app, subscriptionId, { tenantId });
}
