import { afterEach, describe, expect, it } from "vitest";
import { serveHttp, signupTenant, startBackend, type TestTenant } from "./_helpers.ts";
import { openSse, type SseClient, type SseEvent } from "./_sse.ts";
import { tokenFromOutbox } from "./_email.ts";
import { PASSWORD, familyBackend, tenantFrom } from "./family-fixtures.ts";
import { billingBackend } from "./billing-fixtures.ts";
import { startFakeStripe, type FakeStripe } from "./fake-stripe.ts";

/**
 * What reaches a tenant's stream besides records (issue 41): the end of its session, however
 * it ends, and the tenant events of its subscription, entitlements and family. Real HTTP, real
 * SSE readers; test/realtime.test.ts has logout, refresh-token reuse and records.
 */

/** A tenant's stream, once it is ready. */
async function streamOf(url: string, tenant: TestTenant): Promise<SseClient> {
  const sse = await openSse(`${url}/api/v1/realtime`, { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": tenant.bearer.appId });
  expect(sse.status).toBe(200);
  await sse.next((e) => e.event === "ready");
  return sse;
}

const tenantEvents = (sse: SseClient) => sse.events.filter((e) => e.event === "tenant").map((e) => e.data);
const isTenant = (e: SseEvent) => e.event === "tenant";

/** Waits for the stream to end and says how long it took from `since`. */
async function endedWithin(sse: SseClient, since: number): Promise<number> {
  await Promise.race([sse.ended, new Promise((r) => setTimeout(r, 3000))]);
  const took = Date.now() - since;
  expect(sse.events.at(-1), JSON.stringify(sse.events.map((e) => e.event))).toMatchObject({ event: "ended", data: { reason: "session_ended" } });
  return took;
}

describe("realtime: the stream ends within 1 s when the session ends", () => {
  it("on a password reset through the emailed token, every stream of every session of the tenant", async () => {
    const t = await startBackend();
    const { url } = await serveHttp(t.backend);
    const tenant = await signupTenant(t, { email: "reset@example.com" });
    const bystander = await signupTenant(t);
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password: PASSWORD } });
    expect(login.status, login.text).toBe(200);
    const streams = [await streamOf(url, tenant), await streamOf(url, { ...tenant, accessToken: login.body.accessToken, bearer: { accessToken: login.body.accessToken, appId: t.app.id } })];
    const theirs = await streamOf(url, bystander);
    expect((await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body: { email: tenant.email } })).status).toBeLessThan(300);
    const token = await tokenFromOutbox(t, tenant.email, "reset");
    const started = Date.now();
    const reset = await t.request("POST", "/api/v1/auth/reset-password", { key: t.app.publishableKey, body: { token, password: "a brand new password" } });
    expect(reset.body).toEqual({ ok: true });
    for (const sse of streams) expect(await endedWithin(sse, started)).toBeLessThan(1000);
    await new Promise((r) => setTimeout(r, 300));
    expect(theirs.events.map((e) => e.event)).toEqual(["ready"]);
  });

  it("on the tenant deleting its own account over HTTP", async () => {
    const t = await startBackend();
    const { url } = await serveHttp(t.backend);
    const tenant = await signupTenant(t);
    const sse = await streamOf(url, tenant);
    const started = Date.now();
    const res = await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer });
    expect(res.body).toEqual({ ok: true, deleted: true });
    expect(await endedWithin(sse, started)).toBeLessThan(1000);
  });
});

describe("realtime tenant events", () => {
  it("family: invites created and revoked, joins (either way), leaving and removal reach the tenants concerned, and no one else", async () => {
    const f = await familyBackend(3);
    const { url } = await serveHttp(f.t.backend);
    const owner = await streamOf(url, f.owner);
    const alexTenant = await f.b.tenant({ email: "alex@example.com" });
    const alex = await streamOf(url, alexTenant);
    const bystander = await streamOf(url, await f.b.tenant());

    const invite = await f.invite();
    expect((await owner.next(isTenant)).data).toEqual({ type: "invites", data: { change: "created", inviteId: invite.id } });
    expect((await f.as(f.owner, "DELETE", `/api/v1/tenants/me/family-invites/${invite.id}`)).status).toBe(200);
    expect((await owner.next(isTenant)).data).toEqual({ type: "invites", data: { change: "revoked", inviteId: invite.id } });

    // An existing account joins: both ends hear of it.
    const forAlex = await f.invite();
    await owner.next(isTenant);
    const joined = await f.as(alexTenant, "POST", "/api/v1/tenants/me/replace-with-family", { token: forAlex.token });
    expect(joined.status, joined.text).toBe(200);
    expect((await owner.next(isTenant)).data).toEqual({ type: "family", data: { change: "member_joined", memberTenantId: alexTenant.id } });
    expect((await alex.next(isTenant)).data).toEqual({ type: "family", data: { change: "joined", parentTenantId: f.owner.id } });

    // A new account joins through the invite's consume: the owner hears of it.
    const forSam = await f.invite();
    await owner.next(isTenant);
    const sam = tenantFrom(await f.consume(forSam.token, "sam@example.com"), f.t.app.id);
    expect((await owner.next(isTenant)).data).toEqual({ type: "family", data: { change: "member_joined", memberTenantId: sam.id } });
    const samStream = await streamOf(url, sam);

    // Alex leaves (with the session the join answered); the owner removes Sam.
    const alexMember = { ...alexTenant, accessToken: joined.body.accessToken, bearer: { accessToken: joined.body.accessToken, appId: f.t.app.id } };
    expect((await f.as(alexMember, "POST", "/api/v1/tenants/me/family/leave")).status).toBe(200);
    expect((await alex.next(isTenant)).data).toEqual({ type: "family", data: { change: "left", parentTenantId: f.owner.id } });
    expect((await owner.next(isTenant)).data).toEqual({ type: "family", data: { change: "member_left", memberTenantId: alexTenant.id } });
    expect((await f.as(f.owner, "POST", "/api/v1/tenants/me/family/remove-member", { member_tenant_id: sam.id })).status).toBe(200);
    expect((await owner.next(isTenant)).data).toEqual({ type: "family", data: { change: "member_removed", memberTenantId: sam.id } });
    expect((await samStream.next(isTenant)).data).toEqual({ type: "family", data: { change: "removed", parentTenantId: f.owner.id } });

    await new Promise((r) => setTimeout(r, 300));
    expect(tenantEvents(owner)).toHaveLength(8);
    expect(tenantEvents(alex)).toHaveLength(2);
    expect(tenantEvents(samStream)).toHaveLength(1);
    expect(tenantEvents(bystander)).toEqual([]);
  });

  it("a gift granted and revoked by the developer", async () => {
    const b = await billingBackend();
    const { url } = await serveHttp(b.t.backend);
    const tenant = await b.tenant();
    const sse = await streamOf(url, tenant);
    const bystander = await streamOf(url, await b.tenant());
    const pro = await b.plan({ name: "Pro", slug: "pro", entitlements: { projects: 5 } });
    expect((await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId: pro.id, days: 30 })).status).toBeLessThan(300);
    expect((await sse.next(isTenant)).data).toEqual({ type: "entitlements", data: { source: "gift", change: "granted", planId: pro.id } });
    const revoked = await b.admin("DELETE", `/tenants/${tenant.id}/billing/gift`);
    expect(revoked.status, revoked.text).toBeLessThan(300);
    expect((await sse.next(isTenant)).data).toEqual({ type: "entitlements", data: { source: "gift", change: "revoked" } });
    await new Promise((r) => setTimeout(r, 300));
    expect(tenantEvents(bystander)).toEqual([]);
  });

  describe("Stripe", () => {
    const SECRET_KEY = "sk_test_tenantd_fake";
    const WEBHOOK_SECRET = "whsec_tenantd_test";
    let fake: FakeStripe | undefined;
    afterEach(async () => {
      await fake?.close();
      fake = undefined;
    });

    it("a subscription that Stripe's webhooks start, put past due and cancel", async () => {
      let clock: () => number = Date.now;
      const stripe = (fake = await startFakeStripe({ secretKey: SECRET_KEY, now: () => clock() }));
      const b = await billingBackend({ stripeApi: stripe.api });
      clock = b.t.clock;
      await b.settings({ stripeSecretKey: SECRET_KEY, stripeWebhookSecret: WEBHOOK_SECRET });
      const plan = await b.plan({ name: "Pro", slug: "pro", priceCents: 1500, entitlements: { projects: 100 } });
      expect((await b.admin("POST", `/plans/${plan.id}/sync-stripe`)).status).toBe(200);
      const { url } = await serveHttp(b.t.backend);
      const tenant = await b.tenant();
      const sse = await streamOf(url, tenant);
      const bystander = await streamOf(url, await b.tenant());
      const deliver = async (type: string, object: Record<string, unknown>) => {
        const { payload, signature } = stripe.signedEvent(WEBHOOK_SECRET, type, object);
        const res = await b.t.request("POST", `/api/v1/billing/stripe/webhook/${b.t.app.id}`, { raw: payload, headers: { "content-type": "application/json", "stripe-signature": signature } });
        expect(res.status, res.text).toBe(200);
      };

      expect((await b.tenantPost(tenant, "/checkout", { planId: plan.id, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" })).status).toBe(200);
      const { session, subscription } = stripe.completeCheckout([...stripe.store.sessions.keys()].pop()!);
      await deliver("checkout.session.completed", session);
      expect((await sse.next(isTenant)).data).toEqual({ type: "subscription", data: { planId: plan.id, status: "active" } });
      await deliver("customer.subscription.updated", stripe.updateSubscription(subscription.id, { status: "past_due" }));
      expect((await sse.next(isTenant)).data).toEqual({ type: "subscription", data: { planId: plan.id, status: "past_due" } });
      await deliver("customer.subscription.deleted", stripe.updateSubscription(subscription.id, { status: "canceled", ended_at: 1 }));
      expect((await sse.next(isTenant)).data).toEqual({ type: "subscription", data: { planId: plan.id, status: "canceled" } });
      await new Promise((r) => setTimeout(r, 300));
      expect(tenantEvents(sse)).toHaveLength(3);
      expect(tenantEvents(bystander)).toEqual([]);
    });
  });
});
