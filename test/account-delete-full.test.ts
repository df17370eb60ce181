import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { expectError, signupTenant, type TestBackend, type TestTenant } from "./_helpers.ts";
import { billingBackend } from "./billing-fixtures.ts";
import { startFakeStripe, type FakeStripe } from "./fake-stripe.ts";
import { startFakeOAuth, type FakeOAuth } from "./fake-oauth.ts";
import { CLIENTS, providerSettings, REDIRECT, signInWith } from "./oauth-helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";
import { BOUNDARY, multipart, sample } from "./files-helpers.ts";
import { DEFAULTS, gift, PASSWORD, tenantFrom } from "./family-fixtures.ts";
import { storeRows } from "./_store.ts";
import { TEST_ENGINE } from "./_engines.ts";
import { mailerFor } from "../src/email/mailer.ts";

const SECRET_KEY = "sk_test_tenantd_fake";
const WEBHOOK_SECRET = "whsec_tenantd_test";
// The delivery log keeps the id of the tenant an event was about; that is its purpose. So
// does the audit trail until its retention (docs/audit.md): the deletion is itself an entry.
const LOG_TABLES = new Set(["webhook_events", "webhook_deliveries", "audit_log"]);

let oauth: FakeOAuth;
let restoreFetch: () => void;
let stripes: FakeStripe[] = [];
beforeAll(async () => {
  oauth = await startFakeOAuth(CLIENTS);
});
afterAll(() => oauth.close());
beforeEach(() => {
  restoreFetch = oauth.interceptFetch();
});
afterEach(async () => {
  restoreFetch();
  await Promise.all(stripes.map((s) => s.close()));
  stripes = [];
});

/** Every row, in every table but the delivery log, holding any of `values` in any column. */
async function leftovers(t: TestBackend, values: string[]): Promise<Record<string, number>> {
  const db = storeRows(t.backend);
  const found: Record<string, number> = {};
  for (const { name, columns } of (await db.tables()).filter((table) => !LOG_TABLES.has(table.name))) {
    // Compared as text: a value may sit in a column of any type (PostgreSQL compares only like types).
    const where = columns.map((c) => `CAST("${c}" AS TEXT) IN (${values.map(() => "?").join(", ")})`).join(" OR ");
    const n = await db.value<number>(`SELECT COUNT(*) FROM "${name}" WHERE ${where}`, ...columns.flatMap(() => values));
    if (n > 0) found[name] = n;
  }
  return found;
}

const idsOf = (t: TestBackend, sql: string, tenantId: string) => storeRows(t.backend).column<string>(sql, tenantId);

async function everything() {
  let now: () => number = Date.now;
  const fake = await startFakeStripe({ secretKey: SECRET_KEY, now: () => now() });
  stripes.push(fake);
  const b = await billingBackend({ stripeApi: fake.api, webhooks: { allowInsecure: true } });
  const { t } = b;
  now = t.clock;
  await b.settings({ stripeSecretKey: SECRET_KEY, stripeWebhookSecret: WEBHOOK_SECRET, defaultEntitlements: DEFAULTS });
  await t.backend.admin.updateApp(t.app.id, { settings: { oauth: { redirectUrls: [REDIRECT], providers: { google: providerSettings(oauth).google! } } } });
  const rx = await startReceiver();
  await configureWebhook(t, b.dev, rx.url);
  const plan = await b.plan({ name: "Family", slug: "family", priceCents: 1500, entitlements: { family_seats: 2, storage: 100 } });
  expect((await b.admin("POST", `/plans/${plan.id}/sync-stripe`)).status).toBe(200);
  const as = (who: TestTenant, method: string, path: string, body?: unknown) => t.request(method, path, { bearer: who.bearer, body });
  return { b, t, fake, rx, plan, as };
}

describe("account deletion, everything a tenant owns", () => {
  it("a Stripe outage stops the deletion before anything is lost: account, records and files stay, and a retry completes", async () => {
    const { b, t, fake, plan, as } = await everything();
    const payer = await b.tenant();
    const checkout = await as(payer, "POST", "/api/v1/billing/checkout", { planId: plan.id, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" });
    expect(checkout.status, checkout.text).toBe(200);
    const { session } = fake.completeCheckout([...fake.store.sessions.keys()].pop()!);
    const signed = fake.signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session);
    expect((await t.request("POST", `/api/v1/billing/stripe/webhook/${t.app.id}`, { raw: signed.payload, headers: { "content-type": "application/json", "stripe-signature": signed.signature } })).status).toBe(200);
    const upload = await t.request("POST", "/api/v1/files/upload", { bearer: payer.bearer, raw: multipart([{ filename: "a.png", type: "image/png", data: sample("png") }]), headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } });
    expect(upload.status).toBe(201);
    const fileUrl = new URL(upload.body.file.url).pathname;

    fake.failNextRequests(10);
    expectError(await as(payer, "POST", "/api/v1/tenants/me/delete"), 502, "provider_error");
    expect((await as(payer, "GET", "/api/v1/auth/me")).status).toBe(200);
    expect((await t.request("GET", fileUrl)).status).toBe(200);
    expect((await as(payer, "GET", `/api/v1/files/${upload.body.file.id}`)).status).toBe(200);

    fake.failNextRequests(0);
    expect((await as(payer, "POST", "/api/v1/tenants/me/delete")).status).toBe(200);
    expect((await t.request("GET", fileUrl)).status).toBe(404);
  });

  it("removes every row and blob of the tenant, cancels Stripe, detaches its family, fires one tenant.deleted", async () => {
    const { b, t, fake, rx, plan, as } = await everything();
    const inviter = await b.tenant();
    const inviteToken = (await as(inviter, "POST", "/api/v1/tenants/me/invite-tokens", {})).body.token.token;

    // The victim signs up by social login with an invite, so it holds an OAuth link and used a token.
    const { fragment } = await signInWith(t, oauth, "google", { id: "g-victim", email: "victim@example.com", verified: true }, { inviteToken });
    expect(fragment.get("service_oauth")).toBe("success");
    const access = fragment.get("service_access_token")!;
    const victim: TestTenant = { id: "", email: "victim@example.com", accessToken: access, refreshToken: fragment.get("service_refresh_token")!, bearer: { accessToken: access, appId: t.app.id } };
    victim.id = (await as(victim, "GET", "/api/v1/auth/me")).body.tenant.id;

    // A paid Stripe subscription to the family plan.
    const checkout = await as(victim, "POST", "/api/v1/billing/checkout", { planId: plan.id, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" });
    expect(checkout.status, checkout.text).toBe(200);
    const { session, subscription } = fake.completeCheckout([...fake.store.sessions.keys()].pop()!);
    const signed = fake.signedEvent(WEBHOOK_SECRET, "checkout.session.completed", session);
    const hook = await t.request("POST", `/api/v1/billing/stripe/webhook/${t.app.id}`, { raw: signed.payload, headers: { "content-type": "application/json", "stripe-signature": signed.signature } });
    expect(hook.status, hook.text).toBe(200);
    expect((await b.subscription(victim)).source).toBe("billing_provider");

    // A family: one member, one pending invite; invite tokens of its own.
    const member = tenantFrom(
      await t.request("POST", "/api/v1/auth/family-invite/consume", { key: t.app.publishableKey, body: { token: (await as(victim, "POST", "/api/v1/tenants/me/family-invites", {})).body.invite.token, email: "member@example.com", password: PASSWORD } }),
      t.app.id,
    );
    expect((await b.subscription(member)).familyOwnerEmail).toBe("victim@example.com");
    expect((await as(victim, "POST", "/api/v1/tenants/me/family-invites", {})).status).toBe(201);
    expect((await as(victim, "POST", "/api/v1/tenants/me/invite-tokens", {})).status).toBe(201);

    // Records with a share link, a file, usage, a reset token and its email, a second session.
    const record = await as(victim, "POST", "/api/v1/data/notes", { data: { text: "secret" } });
    expect(record.status).toBe(201);
    const share = await as(victim, "POST", `/api/v1/data/notes/${record.body.record.id}/share`, {});
    expect(share.status).toBe(201);
    const upload = (who: TestTenant) => t.request("POST", "/api/v1/files/upload", { bearer: who.bearer, raw: multipart([{ filename: "a.png", type: "image/png", data: sample("png") }]), headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` } });
    expect((await upload(victim)).status).toBe(201);
    expect((await upload(inviter)).status).toBe(201);
    expect((await as(victim, "POST", "/api/v1/billing/usage/exports/increment", {})).status).toBe(200);
    expect((await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body: { email: victim.email } })).status).toBeLessThan(300);
    expect((await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: inviter.email, password: PASSWORD } })).status).toBe(200);
    // The reset email goes out after the answer: its outbox row is there once the mailer is idle.
    await mailerFor(t.backend.core).idle();

    const owned = {
      records: await idsOf(t, "SELECT id FROM records WHERE tenant_id = ?", victim.id),
      sessions: await idsOf(t, "SELECT id FROM sessions WHERE tenant_id = ?", victim.id),
      files: await idsOf(t, "SELECT id FROM files WHERE tenant_id = ?", victim.id),
      blobs: await idsOf(t, "SELECT pathname FROM files WHERE tenant_id = ?", victim.id),
      invites: await idsOf(t, "SELECT id FROM invite_tokens WHERE tenant_id = ?", victim.id),
      familyInvites: await idsOf(t, "SELECT id FROM family_invites WHERE tenant_id = ?", victim.id),
    };
    const values = [victim.id, ...Object.values(owned).flat()];
    expect(Object.keys(await leftovers(t, values)).sort()).toEqual(
      [
        "billing_customers", "billing_subscriptions", "billing_usage", "email_tokens", "family_invites", "family_members", "files", "invite_tokens", "oauth_accounts", "outbox", "records", "refresh_tokens", "sessions", "share_links", "tenants",
        // PostgreSQL keeps each collection's record count per tenant (migration 5); both
        // engines keep the bytes of the tenant's record data (the byte quota).
        ...(TEST_ENGINE === "postgres" ? ["record_scopes", "record_byte_stripes"] : ["record_bytes"]),
      ].sort(),
    );
    const otherKeys = (await t.backend.core.storage.getKeys()).filter((k) => !owned.blobs.some((p) => k.replaceAll(":", "/").endsWith(p.replaceAll(":", "/"))));
    expect(otherKeys).toHaveLength(1);

    const res = await as(victim, "POST", "/api/v1/tenants/me/delete");
    expect(res.status, res.text).toBe(200);

    expect(await leftovers(t, values)).toEqual({});
    expect(await t.backend.core.storage.getKeys()).toEqual(otherKeys);
    expect(fake.store.subscriptions.get(subscription.id as string)!.status).toBe("canceled");
    expectError(await as(victim, "GET", "/api/v1/auth/me"), 401, "session_ended");
    expectError(await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: victim.refreshToken } }), 401, "invalid_credentials");
    expectError(await t.request("GET", `/api/v1/public/shared/${share.body.shareToken.token}`), 404, "not_found");

    // Its member is detached and keeps everything of its own.
    expect(await b.entitlements(member)).toEqual(DEFAULTS);
    expect((await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: member.bearer })).body).toMatchObject({ active: true, parentTenantId: null });
    // The inviter's token stays used (its quota spent) but no longer names the deleted tenant.
    expect((await as(inviter, "GET", "/api/v1/tenants/me/invite-tokens")).body).toMatchObject({ tokens: [{ status: "used", usedByTenantId: null }], quota: { used: 1 } });

    const deliveries = await finishedDeliveries(t, b.dev, 1);
    expect(deliveries.filter((d) => d.event === "tenant.deleted")).toHaveLength(1);
    const events = rx.received.map((r) => JSON.parse(r.raw.toString("utf8")));
    expect(events).toEqual([
      { event: "tenant.deleted", timestamp: Math.floor(t.clock() / 1000), appId: t.app.id, tenantId: victim.id, email: "victim@example.com", payload: { reason: "self_delete", locale: "en" } },
    ]);

    // The email is free again: a new tenant, not the old one.
    const again = await signupTenant(t, { email: "victim@example.com" });
    expect(again.id).not.toBe(victim.id);
    expect(await b.entitlements(again)).toEqual(DEFAULTS);
  });

  it("the developer's delete of a member frees the owner's seat and fires admin_delete", async () => {
    const { b, t, rx, plan, as } = await everything();
    const owner = await b.tenant();
    await gift(b, owner, plan.id);
    const invite = (await as(owner, "POST", "/api/v1/tenants/me/family-invites", {})).body.invite;
    const member = tenantFrom(await t.request("POST", "/api/v1/auth/family-invite/consume", { key: t.app.publishableKey, body: { token: invite.token, email: "gone@example.com", password: PASSWORD } }), t.app.id);
    expect((await as(owner, "GET", "/api/v1/tenants/me/family-invites")).body.seats).toEqual({ limit: 2, used: 1, pending: 0, remaining: 1 });

    const res = await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/tenants/${member.id}`, { developer: b.dev });
    expect(res.status).toBe(204);
    expect(await leftovers(t, [member.id])).toEqual({});
    expect((await as(owner, "GET", "/api/v1/tenants/me/family/members")).body).toEqual({ members: [] });
    const listed = (await as(owner, "GET", "/api/v1/tenants/me/family-invites")).body;
    expect(listed.seats).toEqual({ limit: 2, used: 0, pending: 0, remaining: 2 });
    expect(listed.invites).toMatchObject([{ id: invite.id, status: "used", usedByTenantId: null }]);
    expectError(await as(member, "GET", "/api/v1/auth/me"), 401, "session_ended");

    await finishedDeliveries(t, b.dev, 1);
    expect(rx.received.map((r) => JSON.parse(r.raw.toString("utf8")))).toEqual([
      { event: "tenant.deleted", timestamp: Math.floor(t.clock() / 1000), appId: t.app.id, tenantId: member.id, email: "gone@example.com", payload: { reason: "admin_delete", locale: "en" } },
    ]);
  });
});
