import { afterEach, describe, expect, it } from "vitest";
import { expectError, type Reply, type TestTenant } from "./_helpers.ts";
import { billingBackend, type BillingBackend } from "./billing-fixtures.ts";
import { startFakeStripe, type FakeStripe } from "./fake-stripe.ts";

const SECRET_KEY = "sk_test_tenantd_fake";
const WEBHOOK_SECRET = "whsec_tenantd_test";
const urls = { successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" };

let fakes: FakeStripe[] = [];
afterEach(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  fakes = [];
});

interface StripeSetup {
  b: BillingBackend;
  fake: FakeStripe;
  pro: { id: string; slug: string; stripePriceId: string };
  /** Posts a Stripe-signed event to the app's webhook endpoint. */
  deliver(type: string, object: Record<string, unknown>, eventId?: string): Promise<Reply & { payload: string; signature: string }>;
  post(payload: string, signature?: string, appId?: string): Promise<Reply>;
  /** Checkout through Stripe, the customer pays, Stripe sends checkout.session.completed. */
  subscribe(tenant: TestTenant): Promise<{ subscription: Record<string, any>; sessionId: string }>;
}

async function stripeBackend(): Promise<StripeSetup> {
  let clock: () => number = Date.now;
  const fake = await startFakeStripe({ secretKey: SECRET_KEY, now: () => clock() });
  fakes.push(fake);
  const b = await billingBackend({ stripeApi: fake.api });
  clock = b.t.clock;
  await b.settings({ stripeSecretKey: SECRET_KEY, stripeWebhookSecret: WEBHOOK_SECRET, defaultEntitlements: { projects: 1 } });
  const plan = await b.plan({ name: "Pro", slug: "pro", priceCents: 1500, entitlements: { projects: 100 } });
  const synced = await b.admin("POST", `/plans/${plan.id}/sync-stripe`);
  expect(synced.status, synced.text).toBe(200);
  const post = (payload: string, signature?: string, appId = b.t.app.id) =>
    b.t.request("POST", `/api/v1/billing/stripe/webhook/${appId}`, { raw: payload, headers: { "content-type": "application/json", ...(signature ? { "stripe-signature": signature } : {}) } });
  const deliver = async (type: string, object: Record<string, unknown>, eventId?: string) => {
    const { payload, signature } = fake.signedEvent(WEBHOOK_SECRET, type, object, eventId);
    return { ...(await post(payload, signature)), payload, signature };
  };
  return {
    b,
    fake,
    pro: synced.body.plan,
    deliver,
    post,
    async subscribe(tenant) {
      const res = await b.tenantPost(tenant, "/checkout", { planId: plan.id, ...urls });
      expect(res.status, res.text).toBe(200);
      const sessionId = [...fake.store.sessions.keys()].pop()!;
      const { session, subscription } = fake.completeCheckout(sessionId);
      const delivered = await deliver("checkout.session.completed", session);
      expect(delivered.status, delivered.text).toBe(200);
      return { subscription, sessionId };
    },
  };
}

const sent = (fake: FakeStripe, method: string, path: string | RegExp) =>
  fake.requests.filter((r) => r.method === method && (typeof path === "string" ? r.path === path : path.test(r.path)));

describe("Stripe prices", () => {
  it("sync-stripe creates the product and price from the plan, and a new price only when the plan's price changes", async () => {
    const { b, fake, pro } = await stripeBackend();
    expect(pro.stripePriceId).toMatch(/^price_/);
    expect(sent(fake, "POST", "/v1/products").map((r) => r.body)).toEqual([{ name: "Pro", metadata: { tenantd_app: b.t.app.id, tenantd_plan: pro.id } }]);
    expect(sent(fake, "POST", "/v1/prices").map((r) => r.body)).toEqual([
      { product: expect.stringMatching(/^prod_/), unit_amount: "1500", currency: "usd", recurring: { interval: "month" }, metadata: { tenantd_app: b.t.app.id, tenantd_plan: pro.id } },
    ]);
    expect(fake.requests.every((r) => r.authorization === `Bearer ${SECRET_KEY}`)).toBe(true);

    const again = await b.admin("POST", `/plans/${pro.id}/sync-stripe`);
    expect(again.body.plan.stripePriceId).toBe(pro.stripePriceId);
    expect(sent(fake, "POST", "/v1/prices")).toHaveLength(1);

    await b.admin("PATCH", `/plans/${pro.id}`, { priceCents: 2500, interval: "year" });
    const repriced = await b.admin("POST", `/plans/${pro.id}/sync-stripe`);
    expect(repriced.body.plan.stripePriceId).not.toBe(pro.stripePriceId);
    expect(sent(fake, "POST", "/v1/prices").pop()!.body).toMatchObject({ unit_amount: "2500", recurring: { interval: "year" } });
    expect(sent(fake, "POST", "/v1/products")).toHaveLength(1);
  });

  it("a price id can be linked by hand; a plan with no price cannot be bought; an app without keys cannot sync", async () => {
    const { b, fake } = await stripeBackend();
    const linked = await b.plan({ name: "Team", slug: "team", stripePriceId: "price_fromDashboard" });
    expect(linked.stripePriceId).toBe("price_fromDashboard");
    const bare = await b.plan({ name: "Bare", slug: "bare" });
    const tenant = await b.tenant();
    expectError(await b.tenantPost(tenant, "/checkout", { planId: bare.id, ...urls }), 409, "conflict");
    // Stripe does not know the hand-linked price: its refusal is a 400 that names Stripe.
    const refused = await b.admin("POST", `/plans/${linked.id}/sync-stripe`);
    expectError(refused, 400, "invalid_request");
    expect(refused.body.message).toContain("Stripe");
    expect(sent(fake, "GET", "/v1/prices/price_fromDashboard")).toHaveLength(1);

    await b.settings({ stripeSecretKey: null });
    expectError(await b.admin("POST", `/plans/${bare.id}/sync-stripe`), 409, "conflict");
  });
});

describe("Stripe checkout and portal", () => {
  it("checkout sends a subscription session for the tenant and plan, reusing the tenant's customer", async () => {
    const { b, fake, pro } = await stripeBackend();
    const tenant = await b.tenant();
    const res = await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls, currency: "USD" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.url).toMatch(/^https:\/\/checkout\.stripe\.test\//);
    const customers = sent(fake, "POST", "/v1/customers");
    expect(customers.map((r) => r.body)).toEqual([{ email: tenant.email, metadata: { tenantd_app: b.t.app.id, tenantd_tenant: tenant.id } }]);
    const metadata = { tenantd_app: b.t.app.id, tenantd_tenant: tenant.id, tenantd_plan: pro.id };
    expect(sent(fake, "POST", "/v1/checkout/sessions")[0]!.body).toEqual({
      mode: "subscription",
      customer: fake.store.customers.keys().next().value,
      client_reference_id: tenant.id,
      line_items: [{ price: pro.stripePriceId, quantity: "1" }],
      success_url: urls.successUrl,
      cancel_url: urls.cancelUrl,
      metadata,
      subscription_data: { metadata },
      currency: "usd",
    });
    await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls });
    expect(sent(fake, "POST", "/v1/customers")).toHaveLength(1);
    expect(sent(fake, "POST", "/v1/checkout/sessions")[1]!.body.customer).toBe(sent(fake, "POST", "/v1/checkout/sessions")[0]!.body.customer);
  });

  it("portal opens Stripe's billing portal for the tenant's customer, and refuses a tenant without one", async () => {
    const { b, fake, subscribe } = await stripeBackend();
    const tenant = await b.tenant();
    expectError(await b.tenantPost(tenant, "/portal", { returnUrl: "https://app.example.com/account" }), 409, "conflict");
    await subscribe(tenant);
    const res = await b.tenantPost(tenant, "/portal", { returnUrl: "https://app.example.com/account" });
    expect(res.status, res.text).toBe(200);
    expect(res.body.url).toMatch(/^https:\/\/billing\.stripe\.test\//);
    expect(sent(fake, "POST", "/v1/billing_portal/sessions").map((r) => r.body)).toEqual([
      { customer: fake.store.customers.keys().next().value, return_url: "https://app.example.com/account" },
    ]);
  });

  it("a Stripe outage is a 502 with nothing stored", async () => {
    const { b, fake, pro } = await stripeBackend();
    const tenant = await b.tenant();
    fake.failNextRequests(10);
    expectError(await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls }), 502, "provider_error");
    fake.failNextRequests(0);
    expect(await b.subscription(tenant)).toBeNull();
  });
});

describe("Stripe webhooks", () => {
  it("checkout.session.completed shows in the subscription and entitlements at once; a replay has no second effect", async () => {
    const { b, fake, pro, subscribe, deliver } = await stripeBackend();
    const tenant = await b.tenant();
    const { subscription, sessionId } = await subscribe(tenant);
    expect(await b.subscription(tenant)).toEqual({
      planId: pro.id, planName: "Pro", planSlug: "pro", status: "active",
      currentPeriodEnd: new Date(subscription.items.data[0].current_period_end * 1000).toISOString(), cancelAtPeriodEnd: false, source: "billing_provider",
    });
    expect(await b.entitlements(tenant)).toEqual({ projects: 100 });

    // The same event again (Stripe redelivers): acknowledged, not applied, Stripe not asked.
    fake.updateSubscription(subscription.id, { status: "canceled" });
    const reads = sent(fake, "GET", /^\/v1\/subscriptions\//).length;
    const eventId = JSON.parse(fake.signedEvent(WEBHOOK_SECRET, "x", {}).payload).id;
    const first = await deliver("checkout.session.completed", fake.store.sessions.get(sessionId)!, `${eventId}_replay`);
    expect(first.body).toEqual({ received: true, duplicate: false });
    fake.updateSubscription(subscription.id, { status: "active" });
    const replay = await b.t.request("POST", `/api/v1/billing/stripe/webhook/${b.t.app.id}`, { raw: first.payload, headers: { "content-type": "application/json", "stripe-signature": first.signature } });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ received: true, duplicate: true });
    expect(sent(fake, "GET", /^\/v1\/subscriptions\//)).toHaveLength(reads + 1);
    expect((await b.subscription(tenant)).status).toBe("canceled");
  });

  it("an event that fails while Stripe is down is not recorded, so Stripe's redelivery applies it", async () => {
    const { b, fake, pro, deliver, post } = await stripeBackend();
    const tenant = await b.tenant();
    await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls });
    const { session } = fake.completeCheckout([...fake.store.sessions.keys()].pop()!);
    fake.failNextRequests(10);
    const failed = await deliver("checkout.session.completed", session);
    expectError(failed, 502, "provider_error");
    fake.failNextRequests(0);
    expect(await b.subscription(tenant)).toBeNull();
    const again = await post(failed.payload, failed.signature);
    expect(again.body).toEqual({ received: true, duplicate: false });
    expect((await b.subscription(tenant)).status).toBe("active");
  });

  it("customer.subscription.updated, invoice.payment_failed and customer.subscription.deleted follow Stripe's state", async () => {
    const { b, fake, subscribe, deliver } = await stripeBackend();
    const tenant = await b.tenant();
    const { subscription } = await subscribe(tenant);
    const step = async (type: string, patch: Record<string, unknown>, object?: Record<string, unknown>) => {
      const sub = fake.updateSubscription(subscription.id, patch);
      const res = await deliver(type, object ?? sub);
      expect(res.status, res.text).toBe(200);
      const s = await b.subscription(tenant);
      return { status: s.status, cancelAtPeriodEnd: s.cancelAtPeriodEnd, projects: (await b.entitlements(tenant)).projects };
    };
    expect(await step("customer.subscription.updated", { cancel_at_period_end: true })).toEqual({ status: "active", cancelAtPeriodEnd: true, projects: 100 });
    expect(await step("customer.subscription.updated", { cancel_at_period_end: false })).toEqual({ status: "active", cancelAtPeriodEnd: false, projects: 100 });
    const invoice = { id: "in_1", object: "invoice", parent: { type: "subscription_details", subscription_details: { subscription: subscription.id, metadata: {} } } };
    expect(await step("invoice.payment_failed", { status: "past_due" }, invoice)).toEqual({ status: "past_due", cancelAtPeriodEnd: false, projects: 100 });
    expect(await step("invoice.payment_failed", { status: "unpaid" }, invoice)).toEqual({ status: "unpaid", cancelAtPeriodEnd: false, projects: 1 });
    expect(await step("customer.subscription.updated", { status: "active" })).toEqual({ status: "active", cancelAtPeriodEnd: false, projects: 100 });
    expect(await step("customer.subscription.deleted", { status: "canceled", ended_at: 1 })).toEqual({ status: "canceled", cancelAtPeriodEnd: false, projects: 1 });
  });

  it("customer.subscription.created maps a subscription made in Stripe's dashboard by customer and price", async () => {
    const { b, fake, pro, subscribe, deliver } = await stripeBackend();
    const tenant = await b.tenant();
    const { subscription } = await subscribe(tenant);
    await deliver("customer.subscription.deleted", fake.updateSubscription(subscription.id, { status: "canceled" }));
    // A subscription whose first payment is still pending shows as nothing new and grants nothing.
    const pending = fake.createSubscription({ customer: subscription.customer, price: pro.stripePriceId, status: "incomplete" });
    await deliver("customer.subscription.created", pending);
    expect(await b.subscription(tenant)).toBeNull();
    expect((await b.entitlements(tenant)).projects).toBe(1);
    const created = fake.createSubscription({ customer: subscription.customer, price: pro.stripePriceId });
    const res = await deliver("customer.subscription.created", created);
    expect(res.status, res.text).toBe(200);
    expect(await b.subscription(tenant)).toMatchObject({ status: "active", planId: pro.id, source: "billing_provider" });
  });

  it("out-of-order events do not move a subscription backwards", async () => {
    const { b, fake, subscribe, deliver } = await stripeBackend();
    const tenant = await b.tenant();
    const { subscription } = await subscribe(tenant);
    const staleActive = structuredClone(fake.store.subscriptions.get(subscription.id)!);
    await deliver("customer.subscription.deleted", fake.updateSubscription(subscription.id, { status: "canceled" }));
    // The older "updated: active" arrives after the deletion.
    expect((await deliver("customer.subscription.updated", staleActive)).status).toBe(200);
    expect((await b.subscription(tenant)).status).toBe("canceled");

    // A new subscription; then a late event about the old, canceled one must not replace it.
    const renewed = fake.createSubscription({ customer: subscription.customer, price: staleActive.items.data[0].price.id, metadata: staleActive.metadata });
    await deliver("customer.subscription.created", renewed);
    expect((await b.subscription(tenant)).status).toBe("active");
    await deliver("customer.subscription.updated", fake.store.subscriptions.get(subscription.id)!);
    expect(await b.subscription(tenant)).toMatchObject({ status: "active" });
    expect((await b.entitlements(tenant)).projects).toBe(100);
  });

  it("a bad signature is 400 and changes nothing", async () => {
    const { b, fake, post, pro } = await stripeBackend();
    const tenant = await b.tenant();
    await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls });
    const { session } = fake.completeCheckout([...fake.store.sessions.keys()].pop()!);
    const good = fake.signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session);
    const wrongSecret = fake.signedEvent("whsec_someone_else", "checkout.session.completed", session);
    const before = fake.requests.length;
    const cases: [string, string | undefined][] = [
      [good.payload.replace('"complete"', '"completed"'), good.signature],
      [wrongSecret.payload, wrongSecret.signature],
      [good.payload, "t=1,v1=deadbeef"],
      [good.payload, undefined],
    ];
    for (const [payload, signature] of cases) expectError(await post(payload, signature), 400, "invalid_signature");
    b.t.clock.advance(10 * 60 * 1000);
    expectError(await post(good.payload, good.signature), 400, "invalid_signature");
    expect(fake.requests.length).toBe(before);
    expect(await b.subscription(tenant)).toBeNull();
  });

  it("the endpoint is per app: unknown app 404, app without a webhook secret 400, another app's tenant ignored", async () => {
    const { b, fake, post, deliver, pro } = await stripeBackend();
    const { payload, signature } = fake.signedEvent(WEBHOOK_SECRET, "customer.subscription.updated", { id: "sub_x" });
    expectError(await post(payload, signature, "app_nope"), 404, "not_found");
    const other = await b.t.request("POST", "/api/v1/admin/apps", { developer: b.dev, body: { name: "no keys" } });
    expectError(await post(payload, signature, other.body.app.id), 400, "invalid_request");

    const tenant = await b.tenant();
    const foreignTenant = fake.createSubscription({ customer: "cus_unknown", price: "price_unknown", metadata: { tenantd_tenant: "tnt_of_another_app" } });
    expect((await deliver("customer.subscription.created", foreignTenant)).status).toBe(200);
    // Another tenantd app on the same Stripe account names this tenant id: not ours to apply.
    const foreignApp = fake.createSubscription({ customer: "cus_unknown", price: pro.stripePriceId, metadata: { tenantd_app: "app_other", tenantd_tenant: tenant.id } });
    expect((await deliver("customer.subscription.created", foreignApp)).status).toBe(200);
    expect(await b.subscription(tenant)).toBeNull();
  });
});

describe("tenant deletion", () => {
  it("cancels the tenant's Stripe subscription through the tenant.deleting hook", async () => {
    const { b, fake, subscribe } = await stripeBackend();
    const tenant = await b.tenant();
    const { subscription } = await subscribe(tenant);
    const app = (await b.t.backend.core.db.apps.findById(b.t.app.id))!;

    fake.failNextRequests(10);
    await expect(b.t.backend.core.hooks.emit("tenant.deleting", { app, tenantId: tenant.id })).rejects.toMatchObject({ status: 502 });
    fake.failNextRequests(0);
    expect(fake.store.subscriptions.get(subscription.id)!.status).toBe("active");

    await b.t.backend.core.hooks.emit("tenant.deleting", { app, tenantId: tenant.id });
    expect(sent(fake, "DELETE", `/v1/subscriptions/${subscription.id}`).length).toBeGreaterThan(0);
    expect(fake.store.subscriptions.get(subscription.id)!.status).toBe("canceled");
    // A subscription Stripe already forgot does not block the deletion.
    fake.store.subscriptions.delete(subscription.id);
    await b.t.backend.core.hooks.emit("tenant.deleting", { app, tenantId: tenant.id });
  });

  it("does nothing for a tenant without a Stripe subscription", async () => {
    const { b, fake } = await stripeBackend();
    const tenant = await b.tenant();
    await b.admin("POST", `/tenants/${tenant.id}/billing/trial`, { planId: "pro", days: 3 });
    const app = (await b.t.backend.core.db.apps.findById(b.t.app.id))!;
    const before = fake.requests.length;
    await b.t.backend.core.hooks.emit("tenant.deleting", { app, tenantId: tenant.id });
    expect(fake.requests.length).toBe(before);
  });
});
