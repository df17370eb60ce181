import * as v from "valibot";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { providerState } from "./effective.ts";
import { callStripe, stripeFor } from "./stripe.ts";
import { requirePlan } from "./plans.ts";
import { META } from "./stripe-sync.ts";
import { createDevCheckout, createDevPortal } from "./dev-provider.ts";

const httpUrl = v.pipe(
  v.string(),
  v.check((s) => /^https?:\/\/[^\s]+$/i.test(s) && URL.canParse(s), "must be an absolute http(s) URL"),
  v.maxLength(2048, "is at most 2048 characters"),
);
export const CheckoutBody = v.object({
  planId: v.pipe(v.string(), v.minLength(1, "is required")),
  successUrl: httpUrl,
  cancelUrl: httpUrl,
  currency: v.optional(v.pipe(v.string(), v.toLowerCase(), v.regex(/^[a-z]{3}$/, "must be a three-letter ISO currency code like usd"))),
});
export const PortalBody = v.object({ returnUrl: httpUrl });

/**
 * A URL the provider sends the browser back to must belong to the app: its origin is one of
 * the app's CORS origins or the origin of an OAuth redirect URL. Anything else would make
 * tenantd (and Stripe) an open redirect to any host.
 */
export function requireAppUrl(app: AppRow, raw: string, field: string): string {
  const origin = new URL(raw).origin;
  // "*" lets any site call the API; it never lets tenantd send a browser anywhere.
  const allowed = new Set<string>();
  for (const u of [...app.settings.corsOrigins, ...app.settings.oauth.redirectUrls]) if (u !== "*" && URL.canParse(u)) allowed.add(new URL(u).origin);
  if (!allowed.has(origin)) {
    throw fail("invalid_redirect", `body.${field}: ${origin} is not one of this app's origins. The developer adds it to settings.corsOrigins (tenantd app update --app ${app.id} --cors-origins …).`);
  }
  return raw;
}

async function requireTenantRow(core: Core, app: AppRow, tenantId: string) {
  const tenant = await core.db.tenants.findById(app.id, tenantId);
  if (!tenant) throw fail("not_found", "No such tenant in this app.");
  return tenant;
}

/** Without Stripe keys, plans are free through the development pages: never in production. */
export function requireDevBilling(core: Core): void {
  if (!core.config.devBilling) {
    throw fail("conflict", "This app has no Stripe secret key and the development billing provider is off (production): set settings.billing.stripeSecretKey.");
  }
}

/**
 * Starts a checkout for a plan: a Stripe Checkout session when the app has a Stripe key,
 * else the development provider's local page. A tenant who already pays is sent to the
 * portal instead of getting a second subscription.
 */
export async function startCheckout(core: Core, app: AppRow, tenantId: string, body: v.InferOutput<typeof CheckoutBody>): Promise<{ url: string }> {
  requireAppUrl(app, body.successUrl, "successUrl");
  requireAppUrl(app, body.cancelUrl, "cancelUrl");
  const plan = await requirePlan(core, app, body.planId, { offered: true });
  const tenant = await requireTenantRow(core, app, tenantId);
  const current = (await core.db.billing.subscriptions(app.id, tenantId)).find((s) => s.source === "billing_provider");
  if (current && providerState(current, core.clock()).entitles) {
    throw fail("conflict", "This tenant already has a paid subscription: change or cancel it through the billing portal (POST /api/v1/billing/portal).");
  }
  const stripe = stripeFor(core, app);
  if (!stripe) {
    requireDevBilling(core);
    if (body.currency && body.currency !== plan.currency) throw fail("invalid_request", `body.currency: plan ${plan.slug} is priced in ${plan.currency}.`);
    return createDevCheckout(core, app, tenantId, plan, body.successUrl, body.cancelUrl);
  }
  if (!plan.stripePriceId) {
    throw fail("conflict", `Plan ${plan.slug} has no Stripe price yet: the developer links one (stripePriceId) or runs tenantd plan sync-stripe.`);
  }
  const metadata = { [META.app]: app.id, [META.tenant]: tenantId, [META.plan]: plan.id };
  let customer = await core.db.billing.stripeCustomer(app.id, tenantId);
  if (!customer) {
    const created = await callStripe(core, "create the customer", () => stripe.customers.create({ email: tenant.email, metadata: { [META.app]: app.id, [META.tenant]: tenantId } }));
    customer = await core.db.billing.saveStripeCustomer(app.id, tenantId, created.id, core.clock());
  }
  return stripeCheckout(core, stripe, { customer, reference: tenantId, priceId: plan.stripePriceId, quantity: 1, metadata, body });
}

/** The Stripe Checkout session of a subscription to one price (a tenant's, or an organization's seats). */
export async function stripeCheckout(
  core: Core,
  stripe: NonNullable<ReturnType<typeof stripeFor>>,
  s: { customer: string; reference: string; priceId: string; quantity: number; metadata: Record<string, string>; body: v.InferOutput<typeof CheckoutBody> },
): Promise<{ url: string }> {
  const session = await callStripe(core, "create the checkout session", () =>
    stripe.checkout.sessions.create({
      mode: "subscription",
      customer: s.customer,
      client_reference_id: s.reference,
      line_items: [{ price: s.priceId, quantity: s.quantity }],
      success_url: s.body.successUrl,
      cancel_url: s.body.cancelUrl,
      metadata: s.metadata,
      subscription_data: { metadata: s.metadata },
      ...(s.body.currency ? { currency: s.body.currency } : {}),
    }),
  );
  if (!session.url) throw fail("provider_error", "Stripe returned a checkout session without a URL.");
  return { url: session.url };
}

/** Opens the billing portal of the tenant's provider: Stripe's, or the development page. */
export async function openPortal(core: Core, app: AppRow, tenantId: string, returnUrl: string): Promise<{ url: string }> {
  requireAppUrl(app, returnUrl, "returnUrl");
  await requireTenantRow(core, app, tenantId);
  const current = (await core.db.billing.subscriptions(app.id, tenantId)).find((s) => s.source === "billing_provider");
  const stripe = stripeFor(core, app);
  if (current?.provider === "dev" || !stripe) {
    requireDevBilling(core);
    if (current?.provider !== "dev") throw fail("conflict", "This tenant has no subscription to manage yet: start one with POST /api/v1/billing/checkout.");
    return createDevPortal(core, app, tenantId, returnUrl);
  }
  const customer = await core.db.billing.stripeCustomer(app.id, tenantId);
  if (!customer) throw fail("conflict", "This tenant has no Stripe customer yet: start a subscription with POST /api/v1/billing/checkout first.");
  const session = await callStripe(core, "create the billing portal session", () => stripe.billingPortal.sessions.create({ customer, return_url: returnUrl }));
  return { url: session.url };
}
