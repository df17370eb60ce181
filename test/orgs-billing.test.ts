// Billing per organization (docs/organizations.md#billing): plans on an organization, paid
// seats = the Stripe subscription's quantity (both ways), entitlements and usage counters of
// the organization, gifts and trials, against the Stripe fake and the development provider.
import { afterEach, describe, expect, it } from "vitest";
import { buildRequest, expectError, serveHttp, signupTenant, toReply, type TestTenant } from "./_helpers.ts";
import { billingBackend, form, pathOf } from "./billing-fixtures.ts";
import { startFakeStripe, type FakeStripe } from "./fake-stripe.ts";
import { clientBackend } from "./client-helpers.ts";
import { createPlan } from "../src/billing/plans.ts";
import { TenantdError } from "../src/client/index.ts";

const SECRET_KEY = "sk_test_tenantd_orgs";
const WEBHOOK_SECRET = "whsec_tenantd_orgs";
const urls = { successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" };

let fakes: FakeStripe[] = [];
afterEach(async () => {
  await Promise.all(fakes.map((f) => f.close()));
  fakes = [];
});

/** A backend with a Stripe-linked plan "team" (projects: 100 per seat-priced subscription) and organization helpers. */
async function orgBilling(orgSettings: Record<string, unknown> = {}, opts: { stripe?: boolean } = { stripe: true }) {
  let clock: () => number = Date.now;
  const fake = opts.stripe ? await startFakeStripe({ secretKey: SECRET_KEY, now: () => clock() }) : undefined;
  if (fake) fakes.push(fake);
  const b = await billingBackend(fake ? { stripeApi: fake.api } : {});
  clock = b.t.clock;
  const { t } = b;
  await t.backend.admin.updateApp(t.app.id, { settings: { orgs: orgSettings } });
  await b.settings({ ...(fake && { stripeSecretKey: SECRET_KEY, stripeWebhookSecret: WEBHOOK_SECRET }), defaultEntitlements: { projects: 1 } });
  let plan = await b.plan({ name: "Team", slug: "team", priceCents: 1200, entitlements: { projects: 100, reports: 3 } });
  if (fake) {
    const synced = await b.admin("POST", `/plans/${plan.id}/sync-stripe`);
    expect(synced.status, synced.text).toBe(200);
    plan = synced.body.plan;
  }
  const as = (who: TestTenant, method: string, path: string, body?: unknown) => t.request(method, `/api/v1/orgs${path}`, { bearer: who.bearer, body });
  const deliver = async (type: string, object: Record<string, unknown>) => {
    const { payload, signature } = fake!.signedEvent(WEBHOOK_SECRET, type, object);
    const res = await t.request("POST", `/api/v1/billing/stripe/webhook/${t.app.id}`, { raw: payload, headers: { "content-type": "application/json", "stripe-signature": signature } });
    expect(res.status, res.text).toBe(200);
  };
  const o = {
    b,
    t,
    fake: fake!,
    plan,
    as,
    deliver,
    async org(owner: TestTenant, name = "Acme") {
      const res = await as(owner, "POST", "", { name });
      expect(res.status, res.text).toBe(201);
      return res.body.org.id as string;
    },
    async link(owner: TestTenant, orgId: string, role = "member") {
      const res = await as(owner, "POST", `/${orgId}/invites`, { role });
      expect(res.status, res.text).toBe(201);
      return res.body.invite.token as string;
    },
    async join(who: TestTenant, orgId: string, owner: TestTenant, role = "member") {
      const res = await as(who, "POST", "/invites/accept", { token: await o.link(owner, orgId, role) });
      expect(res.status, res.text).toBe(200);
    },
    async billing(who: TestTenant, orgId: string) {
      const res = await as(who, "GET", `/${orgId}/billing`);
      expect(res.status, res.text).toBe(200);
      return res.body;
    },
    /** Checkout through Stripe for `seats`, the customer pays, Stripe sends checkout.session.completed. */
    async subscribe(who: TestTenant, orgId: string, seats?: number) {
      const res = await as(who, "POST", `/${orgId}/billing/checkout`, { planId: plan.id, ...urls, ...(seats && { seats }) });
      expect(res.status, res.text).toBe(200);
      const { session, subscription } = fake!.completeCheckout([...fake!.store.sessions.keys()].pop()!);
      await deliver("checkout.session.completed", session);
      return subscription as Record<string, any>;
    },
    /** The organization entries of the trail, oldest first. */
    trail: async () => ((await t.request("GET", `/api/v1/admin/apps/${t.app.id}/audit?action=org.*&limit=100`, { developer: b.dev })).body.entries as Record<string, any>[]).reverse(),
  };
  return o;
}

const sent = (fake: FakeStripe, method: string, path: string | RegExp) =>
  fake.requests.filter((r) => r.method === method && (typeof path === "string" ? r.path === path : path.test(r.path)));

describe("organization billing with Stripe", () => {
  it("checkout → webhook: the organization has the plan, its entitlements and the paid seats; the tenant's own billing is untouched", async () => {
    const o = await orgBilling();
    const owner = await signupTenant(o.t);
    const orgId = await o.org(owner);
    const before = await o.billing(owner, orgId);
    expect(before).toEqual({ subscription: null, entitlements: { projects: 1 }, seats: { limit: null, used: 1, pending: 0, remaining: null }, usage: [] });

    const sub = await o.subscribe(owner, orgId, 3);
    const checkout = sent(o.fake, "POST", "/v1/checkout/sessions")[0]!.body;
    expect(checkout).toMatchObject({ client_reference_id: orgId, line_items: [{ price: o.plan.stripePriceId, quantity: "3" }], metadata: { tenantd_app: o.t.app.id, tenantd_org: orgId, tenantd_plan: o.plan.id } });
    expect(sent(o.fake, "POST", "/v1/customers")[0]!.body).toEqual({ name: "Acme", email: owner.email, metadata: { tenantd_app: o.t.app.id, tenantd_org: orgId } });

    const after = await o.billing(owner, orgId);
    expect(after).toMatchObject({
      subscription: { planId: o.plan.id, planSlug: "team", status: "active", source: "billing_provider", seats: 3 },
      entitlements: { projects: 100, reports: 3 },
      seats: { limit: 3, used: 1, pending: 0, remaining: 2 },
    });
    // The organization pays; its owner does not.
    expect(await o.b.subscription(owner)).toBeNull();
    expect(await o.b.entitlements(owner)).toEqual({ projects: 1 });

    const admin = await o.b.admin("GET", `/orgs/${orgId}/billing`);
    expect(admin.status, admin.text).toBe(200);
    expect(admin.body).toMatchObject({ org: { id: orgId }, stripeCustomerId: sub.customer, sources: [{ source: "billing_provider", providerSubscriptionId: sub.id, seats: 3, status: "active" }] });
    expect((await o.trail()).filter((e) => e.action === "org.subscription.updated")).toMatchObject([
      { target: orgId, actor: { type: "system" }, details: { source: "billing_provider", provider: "stripe", planId: o.plan.id, status: "active", seats: 3 } },
    ]);

    // A second checkout while it pays is sent to the portal.
    expectError(await o.as(owner, "POST", `/${orgId}/billing/checkout`, { planId: o.plan.id, ...urls }), 409, "conflict");
    const portal = await o.as(owner, "POST", `/${orgId}/billing/portal`, { returnUrl: "https://app.example.com/billing" });
    expect(portal.status, portal.text).toBe(200);
    expect(sent(o.fake, "POST", "/v1/billing_portal/sessions")[0]!.body).toEqual({ customer: sub.customer, return_url: "https://app.example.com/billing" });
    expect((await o.trail()).filter((e) => e.action === "org.billing_portal_opened")).toMatchObject([{ target: orgId, tenantId: owner.id, actor: { type: "tenant", id: owner.id } }]);
  });

  it("a quantity change in Stripe changes the seats; PUT …/billing/seats changes Stripe's quantity, never below the seats in use", async () => {
    const o = await orgBilling();
    const [owner, bob, carol] = await Promise.all([1, 2, 3].map(() => signupTenant(o.t)));
    const orgId = await o.org(owner!);
    const sub = await o.subscribe(owner!, orgId, 2);
    o.fake.updateSubscription(sub.id, { items: { ...sub.items, data: [{ ...sub.items.data[0], quantity: 5 }] } });
    await o.deliver("customer.subscription.updated", o.fake.store.subscriptions.get(sub.id)!);
    expect((await o.billing(owner!, orgId)).seats).toEqual({ limit: 5, used: 1, pending: 0, remaining: 4 });

    await o.join(bob!, orgId, owner!);
    await o.join(carol!, orgId, owner!);
    const put = await o.as(owner!, "PUT", `/${orgId}/billing/seats`, { seats: 4 });
    expect(put.status, put.text).toBe(200);
    expect(put.body.seats).toEqual({ limit: 4, used: 3, pending: 0, remaining: 1 });
    const item = o.fake.store.subscriptions.get(sub.id)!.items.data[0];
    expect(sent(o.fake, "POST", `/v1/subscriptions/${sub.id}`).map((r) => r.body)).toEqual([{ items: [{ id: item.id, quantity: "4" }] }]);
    expect(item.quantity).toBe(4);

    const below = await o.as(owner!, "PUT", `/${orgId}/billing/seats`, { seats: 2 });
    expectError(below, 409, "conflict");
    expect(below.body.message).toContain("3 seats are in use");
    expect(item.quantity).toBe(4);
  });

  it("past the paid seats an invite and an accept are 402 limit_reached naming the seats, and nothing is kept", async () => {
    const o = await orgBilling({ inviteUrl: "https://app.example.com/join?t={token}" });
    const [owner, bob, carol] = await Promise.all([1, 2, 3].map(() => signupTenant(o.t)));
    const orgId = await o.org(owner!);
    await o.subscribe(owner!, orgId, 2);
    const token = await o.link(owner!, orgId);
    expect((await o.as(bob!, "POST", "/invites/accept", { token })).status).toBe(200);

    const refused = await o.as(carol!, "POST", "/invites/accept", { token });
    expectError(refused, 402, "limit_reached");
    expect(refused.body.message).toContain("All 2 paid seats");
    expect(refused.body.message).toContain("seats");
    expectError(await o.as(owner!, "POST", `/${orgId}/invites`, { email: "dave@example.com" }), 402, "limit_reached");
    // A sign-up with the link is refused the same way, and no account is left behind.
    const signup = await o.t.request("POST", "/api/v1/auth/signup", { key: o.t.app.publishableKey, body: { email: "erin@example.com", password: "correct horse battery", inviteToken: token } });
    expectError(signup, 402, "limit_reached");
    const login = await o.t.request("POST", "/api/v1/auth/login", { key: o.t.app.publishableKey, body: { email: "erin@example.com", password: "correct horse battery" } });
    expect(login.status).toBe(401);
    expect((await o.as(owner!, "GET", `/${orgId}/members`)).body.members).toHaveLength(2);
    expect((await o.billing(owner!, orgId)).seats).toEqual({ limit: 2, used: 2, pending: 0, remaining: 0 });
  });

  it("concurrent accepts past the paid seats: exactly the free seats fill, the rest get 402 and leave nothing", async () => {
    const o = await orgBilling();
    const owner = await signupTenant(o.t);
    const orgId = await o.org(owner);
    await o.subscribe(owner, orgId, 3);
    const token = await o.link(owner, orgId);
    const tenants = await Promise.all(Array.from({ length: 6 }, () => signupTenant(o.t)));
    const { url, server } = await serveHttp(o.t.backend);
    try {
      const replies = await Promise.all(tenants.map((who) => fetch(buildRequest(url, "POST", "/api/v1/orgs/invites/accept", { bearer: who.bearer, body: { token } })).then(toReply)));
      const won = replies.filter((r) => r.status === 200);
      expect(won).toHaveLength(2);
      for (const r of replies.filter((x) => x.status !== 200)) expectError(r, 402, "limit_reached");
    } finally {
      server.close();
    }
    expect((await o.as(owner, "GET", `/${orgId}/members`)).body.members).toHaveLength(3);
    expect((await o.as(owner, "GET", `/${orgId}/invites`)).body).toMatchObject({ invites: [{ uses: 2 }], seats: { limit: 3, used: 3, pending: 0, remaining: 0 } });
  });

  it('seatBilling "auto": a join past the paid seats buys one in Stripe, a leave gives it back', async () => {
    const o = await orgBilling({ seatBilling: "auto" });
    const [owner, bob, carol] = await Promise.all([1, 2, 3].map(() => signupTenant(o.t)));
    const orgId = await o.org(owner!);
    const sub = await o.subscribe(owner!, orgId);
    expect(sent(o.fake, "POST", "/v1/checkout/sessions")[0]!.body.line_items).toEqual([{ price: o.plan.stripePriceId, quantity: "1" }]);
    await o.join(bob!, orgId, owner!);
    await o.join(carol!, orgId, owner!);
    const quantity = () => o.fake.store.subscriptions.get(sub.id)!.items.data[0].quantity;
    expect(quantity()).toBe(3);
    expect((await o.billing(owner!, orgId)).seats).toEqual({ limit: 3, used: 3, pending: 0, remaining: 0 });
    expect((await o.as(carol!, "POST", `/${orgId}/leave`, {})).status).toBe(204);
    expect(quantity()).toBe(2);
    expect((await o.billing(owner!, orgId)).subscription.seats).toBe(2);
    // A sign-up with an invite buys its seat too.
    const signup = await o.t.request("POST", "/api/v1/auth/signup", { key: o.t.app.publishableKey, body: { email: "dana@example.com", password: "correct horse battery", inviteToken: await o.link(owner!, orgId) } });
    expect(signup.status, signup.text).toBe(201);
    expect(quantity()).toBe(3);
    expect((await o.trail()).filter((e) => e.action === "org.subscription.updated").map((e) => e.details.seats)).toEqual([1, 2, 3, 2, 3]);
  });

  it("deleting the organization, or the account of its last member, cancels its Stripe subscription; one with members left keeps paying", async () => {
    const o = await orgBilling();
    const [owner, loner, leader, follower] = await Promise.all([1, 2, 3, 4].map(() => signupTenant(o.t)));
    const orgId = await o.org(owner!);
    const sub = await o.subscribe(owner!, orgId, 2);
    expect((await o.as(owner!, "DELETE", `/${orgId}`)).status).toBe(204);
    expect(sent(o.fake, "DELETE", `/v1/subscriptions/${sub.id}`)).toHaveLength(1);

    const alone = await o.org(loner!, "Solo");
    const soloSub = await o.subscribe(loner!, alone, 1);
    const shared = await o.org(leader!, "Shared");
    const sharedSub = await o.subscribe(leader!, shared, 2);
    await o.join(follower!, shared, leader!);
    for (const who of [loner!, leader!]) expect((await o.t.request("POST", "/api/v1/tenants/me/delete", { bearer: who.bearer })).status).toBe(200);
    expect(sent(o.fake, "DELETE", `/v1/subscriptions/${soloSub.id}`)).toHaveLength(1);
    expect(sent(o.fake, "DELETE", `/v1/subscriptions/${sharedSub.id}`)).toHaveLength(0);
    expect((await o.billing(follower!, shared)).subscription).toMatchObject({ status: "active", seats: 2 });
  });
});

describe("organization billing: who may do what, and bad input", () => {
  it("a member without billing.manage reads the billing but cannot buy (403); another organization's billing is 404; bad bodies are 400", async () => {
    const o = await orgBilling({ roles: { finance: { permissions: ["billing.manage"] } } });
    const [owner, member, finance, stranger] = await Promise.all([1, 2, 3, 4].map(() => signupTenant(o.t)));
    const orgId = await o.org(owner!);
    const otherOrg = await o.org(stranger!, "Other");
    await o.join(member!, orgId, owner!);
    await o.join(finance!, orgId, owner!, "finance");

    expect((await o.billing(member!, orgId)).entitlements).toEqual({ projects: 1 });
    const body = { planId: o.plan.id, ...urls };
    for (const [method, path, b] of [["POST", "checkout", body], ["POST", "portal", { returnUrl: urls.successUrl }], ["PUT", "seats", { seats: 3 }]] as const) {
      const res = await o.as(member!, method, `/${orgId}/billing/${path}`, b);
      expectError(res, 403, "forbidden");
      expect(res.body.message).toContain("billing.manage");
    }
    expect((await o.as(finance!, "POST", `/${orgId}/billing/checkout`, body)).status).toBe(200);

    for (const path of ["", "/usage/projects"]) expectError(await o.as(owner!, "GET", `/${otherOrg}/billing${path}`), 404, "not_found");
    expectError(await o.as(owner!, "POST", `/${otherOrg}/billing/checkout`, body), 404, "not_found");
    expectError(await o.as(owner!, "POST", `/${otherOrg}/billing/usage/projects/increment`, {}), 404, "not_found");
    expectError(await o.as(owner!, "GET", "/org_nope/billing"), 404, "not_found");

    for (const seats of [0, 1.5, "3", 100_001]) expectError(await o.as(owner!, "POST", `/${orgId}/billing/checkout`, { ...body, seats }), 400, "invalid_request");
    const few = await o.as(owner!, "POST", `/${orgId}/billing/checkout`, { ...body, seats: 2 });
    expectError(few, 400, "invalid_request");
    expect(few.body.message).toContain("body.seats: 3 seats are in use");
    expectError(await o.as(owner!, "POST", `/${orgId}/billing/checkout`, { ...body, planId: "nope" }), 404, "not_found");
    expectError(await o.as(owner!, "POST", `/${orgId}/billing/checkout`, { ...body, successUrl: "https://evil.example.net/" }), 400, "invalid_redirect");
    expectError(await o.as(owner!, "POST", `/${orgId}/billing/checkout`, "seats"), 400, "invalid_request");
    expectError(await o.as(owner!, "PUT", `/${orgId}/billing/seats`, { seats: 3 }), 409, "conflict");
    expectError(await o.as(owner!, "PUT", `/${orgId}/billing/seats`, {}), 400, "invalid_request");
    // Nothing bought yet (no Stripe customer): nothing to manage.
    expectError(await o.as(stranger!, "POST", `/${otherOrg}/billing/portal`, { returnUrl: urls.successUrl }), 409, "conflict");
    expectError(await o.as(owner!, "GET", `/${orgId}/billing/usage/bad key`), 400, "invalid_request");
    expectError(await o.as(owner!, "POST", `/${orgId}/billing/usage/projects/increment`, { by: 0 }), 400, "invalid_request");
  });
});

describe("organization usage, gifts and trials", () => {
  it("usage counts against the organization, shared by its members, 402 past the plan's limit", async () => {
    const o = await orgBilling({}, { stripe: false });
    const [owner, member] = await Promise.all([1, 2].map(() => signupTenant(o.t)));
    const orgId = await o.org(owner!);
    await o.join(member!, orgId, owner!);
    const inc = (who: TestTenant, by = 1) => o.as(who, "POST", `/${orgId}/billing/usage/reports/increment`, { by });
    // No plan: `reports` has no limit among the defaults.
    expect((await inc(owner!)).body).toEqual({ count: 1, period: "monthly", limit: null });
    const gift = await o.b.admin("POST", `/orgs/${orgId}/billing/gift`, { planId: o.plan.id, days: 30 });
    expect(gift.status, gift.text).toBe(200);
    expect(gift.body).toMatchObject({ subscription: { source: "gift", planId: o.plan.id, seats: null }, entitlements: { projects: 100, reports: 3 }, sources: [{ source: "gift", seats: null }] });
    expect((await inc(member!, 2)).body).toEqual({ count: 3, period: "monthly", limit: 3 });
    const refused = await inc(owner!);
    expectError(refused, 402, "limit_reached");
    expect(refused.body.message).toContain("3 of 3 used this month");
    expect((await o.as(member!, "GET", `/${orgId}/billing/usage/reports`)).body).toEqual({ count: 3, period: "monthly", limit: 3 });
    expect((await o.billing(owner!, orgId)).usage).toEqual([{ featureKey: "reports", period: "monthly", count: 3, limit: 3 }]);
    // The tenant's own counter is another one.
    expect((await o.b.tenantGet(owner!, "/usage/reports")).body).toMatchObject({ count: 0 });
  });

  it("gifts and trials as for tenants: granted, revoked, audited; unknown organizations are 404", async () => {
    const o = await orgBilling({}, { stripe: false });
    const owner = await signupTenant(o.t);
    const orgId = await o.org(owner);
    const trial = await o.b.admin("POST", `/orgs/${orgId}/billing/trial`, { planId: o.plan.id, days: 14 });
    expect(trial.status, trial.text).toBe(200);
    expect((await o.billing(owner, orgId)).subscription).toMatchObject({ source: "trial", status: "trialing", planId: o.plan.id });
    await o.b.admin("POST", `/orgs/${orgId}/billing/gift`, { planId: o.plan.id });
    expect((await o.billing(owner, orgId)).subscription).toMatchObject({ source: "gift", giftExpiresAt: null });
    expect((await o.b.admin("DELETE", `/orgs/${orgId}/billing/gift`)).status).toBe(204);
    expectError(await o.b.admin("DELETE", `/orgs/${orgId}/billing/gift`), 404, "not_found");
    expect((await o.billing(owner, orgId)).subscription).toMatchObject({ source: "trial" });
    expect((await o.b.admin("DELETE", `/orgs/${orgId}/billing/trial`)).status).toBe(204);
    expectError(await o.b.admin("DELETE", `/orgs/${orgId}/billing/trial`), 404, "not_found");
    expect((await o.billing(owner, orgId)).subscription).toBeNull();
    await o.b.admin("POST", `/orgs/${orgId}/billing/trial`, { planId: o.plan.id, days: 14 });
    // A gift or trial grants the plan, not seats: the app's seats still apply.
    expect((await o.billing(owner, orgId)).seats.limit).toBeNull();

    const trail = (await o.trail()).filter((e) => e.action === "org.subscription.updated");
    expect(trail.map((e) => [e.details.source, e.details.change, e.actor.type])).toEqual([
      ["trial", "granted", "developer"],
      ["gift", "granted", "developer"],
      ["gift", "revoked", "developer"],
      ["trial", "revoked", "developer"],
      ["trial", "granted", "developer"],
    ]);
    expectError(await o.b.admin("POST", `/orgs/org_nope/billing/gift`, { planId: o.plan.id }), 404, "not_found");
    expectError(await o.b.admin("GET", `/orgs/org_nope/billing`), 404, "not_found");
    expectError(await o.b.admin("POST", `/orgs/${orgId}/billing/gift`, { planId: o.plan.id, days: 0 }), 400, "invalid_request");
    expectError(await o.b.admin("POST", `/orgs/${orgId}/billing/trial`, {}), 400, "invalid_request");
  });

  it("without Stripe keys the development provider sells seats: checkout page, confirm, portal cancel", async () => {
    const o = await orgBilling({}, { stripe: false });
    const owner = await signupTenant(o.t);
    const orgId = await o.org(owner);
    const res = await o.as(owner, "POST", `/${orgId}/billing/checkout`, { planId: o.plan.id, ...urls, seats: 4 });
    expect(res.status, res.text).toBe(200);
    const page = await o.t.request("POST", pathOf(res.body.url), form({ action: "confirm" }));
    expect(page.status).toBe(303);
    expect((await o.billing(owner, orgId)).subscription).toMatchObject({ source: "billing_provider", status: "active", seats: 4, cancelAtPeriodEnd: false });
    expect((await o.billing(owner, orgId)).seats.limit).toBe(4);

    const portal = await o.as(owner, "POST", `/${orgId}/billing/portal`, { returnUrl: urls.successUrl });
    expect(portal.status, portal.text).toBe(200);
    expect((await o.t.request("POST", pathOf(portal.body.url), form({ action: "cancel" }))).status).toBe(303);
    expect((await o.billing(owner, orgId)).subscription.cancelAtPeriodEnd).toBe(true);
    // The owner's own subscription was never touched.
    expect(await o.b.subscription(owner)).toBeNull();
  });
});

describe("tenantd/client orgs.billing", () => {
  it("one method per endpoint: checkout, get, setSeats, usage, increment, portal", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example.com"] } });
    const app = (await t.backend.core.db.apps.findById(t.app.id))!;
    const plan = await createPlan(t.backend.core, app, { name: "Team", slug: "team", priceCents: 1200, entitlements: { reports: 2 } });
    const owner = client();
    await owner.auth.signUp({ email: "owner@example.com", password: "correct horse battery" });
    const org = await owner.orgs.create("Acme");
    const url = await owner.orgs.billing.checkout(org.id, { planId: plan.id, ...urls, seats: 2 });
    expect((await t.request("POST", pathOf(url), form({ action: "confirm" }))).status).toBe(303);
    expect(await owner.orgs.billing.get(org.id)).toMatchObject({ subscription: { planSlug: "team", seats: 2 }, entitlements: { reports: 2 }, seats: { limit: 2, used: 1 } });
    expect((await owner.orgs.billing.setSeats(org.id, 5)).seats).toEqual({ limit: 5, used: 1, pending: 0, remaining: 4 });
    expect(await owner.orgs.billing.increment(org.id, "reports", { by: 2 })).toEqual({ count: 2, period: "monthly", limit: 2 });
    expect(await owner.orgs.billing.usage(org.id, "reports")).toEqual({ count: 2, period: "monthly", limit: 2 });
    const refused = await owner.orgs.billing.increment(org.id, "reports").then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(TenantdError);
    expect(refused).toMatchObject({ status: 402, code: "limit_reached" });
    expect(await owner.orgs.billing.portal(org.id, { returnUrl: urls.successUrl })).toContain("/api/v1/public/billing/dev/portal/");
  });
});
