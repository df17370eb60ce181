import { describe, expect, it } from "vitest";
import { developerSession, expectError } from "./_helpers.ts";
import { billingBackend, DAY, form, pathOf, type BillingBackend } from "./billing-fixtures.ts";
import { setFamilyOwnerResolver } from "../src/billing/effective.ts";
import type { TestTenant } from "./_helpers.ts";

const urls = { successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" };

/** Development provider: checkout page → confirm; returns the redirect. */
async function devSubscribe(b: BillingBackend, tenant: TestTenant, planId: string) {
  const res = await b.tenantPost(tenant, "/checkout", { planId, ...urls });
  expect(res.status, res.text).toBe(200);
  const confirm = await b.t.request("POST", pathOf(res.body.url), form({ action: "confirm" }));
  expect(confirm.status, confirm.text).toBe(303);
  return confirm;
}

async function devPortal(b: BillingBackend, tenant: TestTenant) {
  const res = await b.tenantPost(tenant, "/portal", { returnUrl: "https://app.example.com/account" });
  expect(res.status, res.text).toBe(200);
  return pathOf(res.body.url);
}

describe("plans", () => {
  it("are managed by the developer and listed with the app key, sorted, without archived ones", async () => {
    const b = await billingBackend();
    const pro = await b.plan({ name: "Pro", slug: "pro", priceCents: 1900, currency: "EUR", interval: "year", sortOrder: 2, entitlements: { projects: 50, export: true } });
    const basic = await b.plan({ name: "Basic", slug: "basic", description: "For one person", sortOrder: 1, entitlements: { projects: 5 } });
    const old = await b.plan({ name: "Legacy", slug: "legacy", sortOrder: 0 });
    expect((await b.admin("POST", `/plans/${old.id}/archive`)).body.plan.archived).toBe(true);

    const list = await b.t.request("GET", "/api/v1/billing/plans", { key: b.t.app.publishableKey });
    expect(list.status).toBe(200);
    expect(list.body.plans).toEqual([
      { id: basic.id, name: "Basic", slug: "basic", description: "For one person", priceCents: 900, currency: "usd", interval: "month", sortOrder: 1, entitlements: { projects: 5 } },
      { id: pro.id, name: "Pro", slug: "pro", description: null, priceCents: 1900, currency: "eur", interval: "year", sortOrder: 2, entitlements: { projects: 50, export: true } },
    ]);

    const updated = await b.admin("PATCH", `/plans/${basic.id}`, { name: "Starter", sortOrder: 3, entitlements: { projects: 7 } });
    expect(updated.status, updated.text).toBe(200);
    expect(updated.body.plan).toMatchObject({ name: "Starter", slug: "basic", sortOrder: 3, entitlements: { projects: 7 }, priceCents: 900 });
    const after = await b.t.request("GET", "/api/v1/billing/plans", { key: b.t.app.publishableKey });
    expect(after.body.plans.map((p: { slug: string }) => p.slug)).toEqual(["pro", "basic"]);

    const all = await b.admin("GET", "/plans?archived=true");
    expect(all.body.plans.map((p: { slug: string }) => p.slug)).toEqual(["legacy", "pro", "basic"]);
    expectError(await b.t.request("GET", "/api/v1/billing/plans"), 401, "unauthorized");
  });

  it.each([
    ["missing name", { slug: "a", priceCents: 1 }, "name"],
    ["bad slug", { name: "A", slug: "Not A Slug", priceCents: 1 }, "slug"],
    ["negative price", { name: "A", slug: "a", priceCents: -1 }, "priceCents"],
    ["fractional price", { name: "A", slug: "a", priceCents: 1.5 }, "priceCents"],
    ["bad currency", { name: "A", slug: "a", priceCents: 1, currency: "dollars" }, "currency"],
    ["bad interval", { name: "A", slug: "a", priceCents: 1, interval: "week" }, "interval"],
    ["bad entitlement", { name: "A", slug: "a", priceCents: 1, entitlements: { seats: "many" } }, "entitlements"],
    ["negative entitlement", { name: "A", slug: "a", priceCents: 1, entitlements: { seats: -1 } }, "entitlements"],
    ["bad price id", { name: "A", slug: "a", priceCents: 1, stripePriceId: "prod_1" }, "stripePriceId"],
    ["unknown field", { name: "A", slug: "a", priceCents: 1, color: "red" }, "color"],
  ])("refuse a plan with %s (400 naming the field)", async (_name, body, field) => {
    const b = await billingBackend();
    const res = await b.admin("POST", "/plans", body);
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toContain(field);
  });

  it("keep slugs unique per app, and hide other apps and other developers' apps", async () => {
    const b = await billingBackend();
    const plan = await b.plan({ name: "Pro", slug: "pro" });
    expectError(await b.admin("POST", "/plans", { name: "Pro 2", slug: "pro", priceCents: 1 }), 409, "conflict");
    const other = await b.plan({ name: "Other", slug: "other" });
    expectError(await b.admin("PATCH", `/plans/${other.id}`, { slug: "pro" }), 409, "conflict");
    expectError(await b.admin("PATCH", "/plans/plan_nope", { name: "X" }), 404, "not_found");

    const stranger = await developerSession(b.t);
    for (const [method, path] of [["GET", "/plans"], ["POST", "/plans"], ["PATCH", `/plans/${plan.id}`], ["POST", `/plans/${plan.id}/archive`]] as const) {
      const res = await b.t.request(method, `/api/v1/admin/apps/${b.t.app.id}${path}`, { developer: stranger, body: method === "GET" ? undefined : { name: "Mine", slug: "mine", priceCents: 1 } });
      expectError(res, 404, "not_found");
    }
    // The stranger's own app cannot reach this app's plan either.
    const mine = await b.t.request("POST", "/api/v1/admin/apps", { developer: stranger, body: { name: "stranger app" } });
    const res = await b.t.request("PATCH", `/api/v1/admin/apps/${mine.body.app.id}/plans/${plan.id}`, { developer: stranger, body: { name: "stolen" } });
    expectError(res, 404, "not_found");
  });
});

describe("development provider", () => {
  it("runs checkout → active subscription → entitlements → portal cancel, offline", async () => {
    const b = await billingBackend();
    await b.settings({ defaultEntitlements: { projects: 1, export: false } });
    const pro = await b.plan({ name: "Pro <b>", slug: "pro", priceCents: 1500, entitlements: { projects: 20, export: true } });
    const tenant = await b.tenant();
    expect(await b.subscription(tenant)).toBeNull();
    expect(await b.entitlements(tenant)).toEqual({ projects: 1, export: false });

    const checkout = await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls });
    expect(checkout.status, checkout.text).toBe(200);
    expect(checkout.body.url).toMatch(/^http:\/\/localhost:3000\/api\/v1\/public\/billing\/dev\/checkout\/[A-Za-z0-9_-]{40,}$/);
    const page = await b.t.request("GET", pathOf(checkout.body.url));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toContain("text/html");
    expect(page.text).toContain("not a real payment");
    expect(page.text).toContain("Pro &#60;b&#62;");
    expect(page.text).toContain("15.00 USD / month");
    expect(page.text).not.toContain("<b>");

    const confirm = await b.t.request("POST", pathOf(checkout.body.url), form({ action: "confirm" }));
    expect(confirm.status).toBe(303);
    expect(confirm.headers.get("location")).toBe(urls.successUrl);
    const periodEnd = new Date(Date.UTC(2026, 1, 15, 12)).toISOString();
    expect(await b.subscription(tenant)).toEqual({
      planId: pro.id, planName: "Pro <b>", planSlug: "pro", status: "active", currentPeriodEnd: periodEnd, cancelAtPeriodEnd: false, source: "billing_provider",
    });
    expect(await b.entitlements(tenant)).toEqual({ projects: 20, export: true });

    // The page is single use.
    expectError(await b.t.request("POST", pathOf(checkout.body.url), form({ action: "confirm" })), 410, "gone");
    expectError(await b.t.request("GET", pathOf(checkout.body.url)), 410, "gone");
    // A second checkout while paying goes to the portal instead.
    expectError(await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls }), 409, "conflict");

    const portal = await devPortal(b, tenant);
    const portalPage = await b.t.request("GET", portal);
    expect(portalPage.text).toContain("not a real payment");
    expect(portalPage.text).toContain("Cancel at period end");
    expect(portalPage.text).toContain('href="https://app.example.com/account"');
    const cancel = await b.t.request("POST", portal, form({ action: "cancel" }));
    expect(cancel.status).toBe(303);
    expect(cancel.headers.get("location")).toBe(portal);
    expect(await b.subscription(tenant)).toMatchObject({ status: "active", cancelAtPeriodEnd: true, currentPeriodEnd: periodEnd });
    expect((await b.t.request("GET", portal)).text).toContain("Resume subscription");

    // Resume, then cancel again, and let the period run out.
    await b.t.request("POST", portal, form({ action: "resume" }));
    expect(await b.subscription(tenant)).toMatchObject({ status: "active", cancelAtPeriodEnd: false });
    await b.t.request("POST", portal, form({ action: "cancel" }));
    b.t.clock.advance(31 * DAY);
    expect(await b.subscription(tenant)).toMatchObject({ status: "canceled", cancelAtPeriodEnd: true, source: "billing_provider" });
    expect(await b.entitlements(tenant)).toEqual({ projects: 1, export: false });
    // Canceled: a new checkout is allowed again.
    expect((await b.tenantPost(tenant, "/checkout", { planId: pro.id, ...urls })).status).toBe(200);
  });

  it("renews a subscription that was not canceled, and Cancel on the checkout page changes nothing", async () => {
    const b = await billingBackend();
    const plan = await b.plan({ name: "Yearly", slug: "yearly", interval: "year" });
    const tenant = await b.tenant();
    const checkout = await b.tenantPost(tenant, "/checkout", { planId: plan.slug, ...urls });
    const cancel = await b.t.request("POST", pathOf(checkout.body.url), form({ action: "cancel" }));
    expect(cancel.status).toBe(303);
    expect(cancel.headers.get("location")).toBe(urls.cancelUrl);
    expect(await b.subscription(tenant)).toBeNull();
    expectError(await b.t.request("POST", pathOf(checkout.body.url), form({ action: "confirm" })), 410, "gone");

    await devSubscribe(b, tenant, plan.id);
    b.t.clock.advance(400 * DAY);
    expect(await b.subscription(tenant)).toMatchObject({ status: "active", currentPeriodEnd: new Date(Date.UTC(2028, 0, 15, 12)).toISOString() });
  });

  it("opening the portal is recorded in the audit trail like the other step-up actions; a refused one is not", async () => {
    const b = await billingBackend();
    const plan = await b.plan({ name: "Pro", slug: "pro" });
    const tenant = await b.tenant();
    await devSubscribe(b, tenant, plan.id);
    const opened = async () => (await b.t.backend.admin.listAudit(b.t.app.id, { action: "tenant.billing_portal_opened", tenant: tenant.id })).entries;
    await devPortal(b, tenant);
    expect(await opened()).toMatchObject([{ actor: { type: "tenant", id: tenant.id }, tenantId: tenant.id }]);

    b.t.clock.advance(10 * 60 * 1000 + 1);
    expectError(await b.t.request("POST", "/api/v1/billing/portal", { bearer: tenant.bearer, body: { returnUrl: "https://app.example.com" } }), 403, "reauthentication_required");
    expect(await opened()).toHaveLength(1);
  });

  it("refuse bad page requests", async () => {
    const b = await billingBackend();
    const plan = await b.plan({ name: "P", slug: "p" });
    const tenant = await b.tenant();
    expectError(await b.t.request("GET", "/api/v1/public/billing/dev/checkout/not-a-token"), 404, "not_found");
    const checkout = await b.tenantPost(tenant, "/checkout", { planId: plan.id, ...urls });
    const path = pathOf(checkout.body.url);
    expectError(await b.t.request("POST", path, form({ action: "steal" })), 400, "invalid_request");
    expectError(await b.t.request("POST", path, { body: { action: "confirm" } }), 415, "unsupported_media_type");
    // A checkout token is not a portal token.
    expectError(await b.t.request("GET", path.replace("/checkout/", "/portal/")), 404, "not_found");
    b.t.clock.advance(61 * 60 * 1000);
    expectError(await b.t.request("POST", path, form({ action: "confirm" })), 410, "gone");
    expect(await b.subscription(tenant)).toBeNull();
    // No subscription: nothing to manage in the portal.
    expectError(await b.tenantPost(tenant, "/portal", { returnUrl: "https://app.example.com" }), 409, "conflict");
  });
});

describe("checkout and portal input", () => {
  it.each([
    ["unknown plan", { planId: "plan_nope", ...urls }, 404, "not_found"],
    ["missing planId", { ...urls }, 400, "invalid_request"],
    ["relative successUrl", { planId: "P", successUrl: "/ok", cancelUrl: urls.cancelUrl }, 400, "invalid_request"],
    ["javascript cancelUrl", { planId: "P", successUrl: urls.successUrl, cancelUrl: "javascript:alert(1)" }, 400, "invalid_request"],
    ["ftp successUrl", { planId: "P", successUrl: "ftp://x.example/ok", cancelUrl: urls.cancelUrl }, 400, "invalid_request"],
    ["bad currency", { planId: "P", ...urls, currency: "euros" }, 400, "invalid_request"],
    ["other currency than the plan's", { planId: "P", ...urls, currency: "eur" }, 400, "invalid_request"],
    ["archived plan", { planId: "ARCHIVED", ...urls }, 404, "not_found"],
  ])("checkout refuses %s", async (_name, body, status, code) => {
    const b = await billingBackend();
    const plan = await b.plan({ name: "P", slug: "p" });
    const archived = await b.plan({ name: "A", slug: "a" });
    await b.admin("POST", `/plans/${archived.id}/archive`);
    const tenant = await b.tenant();
    const planId = (body as { planId?: string }).planId;
    const real = { ...body, ...(planId === "P" ? { planId: plan.id } : planId === "ARCHIVED" ? { planId: archived.id } : {}) };
    expectError(await b.tenantPost(tenant, "/checkout", real), status, code);
  });

  it("portal refuses a bad returnUrl, and every billing endpoint needs the bearer", async () => {
    const b = await billingBackend();
    const tenant = await b.tenant();
    expectError(await b.tenantPost(tenant, "/portal", { returnUrl: "not a url" }), 400, "invalid_request");
    for (const [method, path] of [["POST", "/checkout"], ["POST", "/portal"], ["GET", "/subscription"], ["GET", "/entitlements"], ["GET", "/usage/x"], ["POST", "/usage/x/increment"]]) {
      expectError(await b.t.request(method!, `/api/v1/billing${path}`, { body: method === "POST" ? {} : undefined }), 401, "unauthorized");
    }
  });

  it("a plan of another app is not found", async () => {
    const b = await billingBackend();
    const other = await b.t.request("POST", "/api/v1/admin/apps", { developer: b.dev, body: { name: "other" } });
    const foreign = await b.t.request("POST", `/api/v1/admin/apps/${other.body.app.id}/plans`, { developer: b.dev, body: { name: "F", slug: "f", priceCents: 1 } });
    expect(foreign.status).toBe(201);
    const tenant = await b.tenant();
    expectError(await b.tenantPost(tenant, "/checkout", { planId: foreign.body.plan.id, ...urls }), 404, "not_found");
    expectError(await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId: foreign.body.plan.id }), 404, "not_found");
  });
});

describe("subscription precedence and expiry", () => {
  it("paid > gift > trial > family > default, each layer showing when the one above ends", async () => {
    const b = await billingBackend();
    await b.settings({ defaultEntitlements: { level: 0, free: true } });
    const mk = (slug: string, level: number) => b.plan({ name: slug.toUpperCase(), slug, entitlements: { level } });
    const [paid, gift, trial, fam] = [await mk("paid", 4), await mk("gift", 3), await mk("trial", 2), await mk("family", 1)];
    const owner = await b.tenant({ email: "owner@example.com" });
    const member = await b.tenant();
    setFamilyOwnerResolver(b.t.backend.core, async (_app, tenantId) => (tenantId === member.id ? { ownerTenantId: owner.id, ownerEmail: "owner@example.com" } : null));

    const view = async () => {
      const s = await b.subscription(member);
      return { slug: s?.planSlug ?? null, source: s?.source ?? null, level: (await b.entitlements(member)).level };
    };
    expect(await view()).toEqual({ slug: null, source: null, level: 0 });
    await b.admin("POST", `/tenants/${owner.id}/billing/gift`, { planId: fam.id });
    expect(await b.subscription(member)).toEqual({
      planId: fam.id, planName: "FAMILY", planSlug: "family", status: "active", currentPeriodEnd: null, cancelAtPeriodEnd: false, source: "family", familyOwnerEmail: "owner@example.com",
    });
    expect(await b.entitlements(member)).toEqual({ level: 1, free: true });
    await b.admin("POST", `/tenants/${member.id}/billing/trial`, { planId: trial.id, days: 60 });
    expect(await view()).toEqual({ slug: "trial", source: "trial", level: 2 });
    await b.admin("POST", `/tenants/${member.id}/billing/gift`, { planId: gift.id });
    expect(await view()).toEqual({ slug: "gift", source: "gift", level: 3 });
    await devSubscribe(b, member, paid.id);
    expect(await view()).toEqual({ slug: "paid", source: "billing_provider", level: 4 });

    // Peel the layers off again.
    const portal = await devPortal(b, member);
    await b.t.request("POST", portal, form({ action: "cancel" }));
    b.t.clock.advance(32 * DAY);
    expect(await view()).toEqual({ slug: "gift", source: "gift", level: 3 });
    expect((await b.admin("DELETE", `/tenants/${member.id}/billing/gift`)).status).toBe(204);
    expectError(await b.admin("DELETE", `/tenants/${member.id}/billing/gift`), 404, "not_found");
    expect(await view()).toEqual({ slug: "trial", source: "trial", level: 2 });
    await b.admin("POST", `/tenants/${member.id}/billing/trial`, { planId: trial.id, days: 1 });
    b.t.clock.advance(DAY);
    expect(await view()).toEqual({ slug: "family", source: "family", level: 1 });
    await b.admin("DELETE", `/tenants/${owner.id}/billing/gift`);
    // Only the lapsed paid subscription is left to show; it grants nothing.
    expect(await view()).toEqual({ slug: "paid", source: "billing_provider", level: 0 });
    expect((await b.subscription(member)).status).toBe("canceled");
  });

  it("a gift expires at its time, a permanent one never; a signup trial ends after its days", async () => {
    const b = await billingBackend();
    const trialPlan = await b.plan({ name: "Trial", slug: "trial", entitlements: { level: 2 } });
    const giftPlan = await b.plan({ name: "Gift", slug: "gift", entitlements: { level: 3 } });
    await b.settings({ trial: { planId: trialPlan.id, days: 7 }, defaultEntitlements: { level: 0 } });
    const tenant = await b.tenant();
    const trialUntil = new Date(b.t.clock() + 7 * DAY).toISOString();
    expect(await b.subscription(tenant)).toEqual({
      planId: trialPlan.id, planName: "Trial", planSlug: "trial", status: "trialing", currentPeriodEnd: trialUntil, cancelAtPeriodEnd: false, source: "trial", trialUntil,
    });
    const expiresAt = new Date(b.t.clock() + 2 * DAY).toISOString();
    const granted = await b.admin("POST", `/tenants/${tenant.email}/billing/gift`, { planId: giftPlan.slug, expiresAt });
    expect(granted.status, granted.text).toBe(200);
    expect(granted.body.subscription).toMatchObject({ source: "gift", giftExpiresAt: expiresAt, status: "active" });
    b.t.clock.advance(2 * DAY - 1);
    expect((await b.entitlements(tenant)).level).toBe(3);
    b.t.clock.advance(1);
    expect(await b.subscription(tenant)).toMatchObject({ source: "trial" });
    b.t.clock.advance(5 * DAY);
    expect(await b.subscription(tenant)).toBeNull();
    expect(await b.entitlements(tenant)).toEqual({ level: 0 });

    await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId: giftPlan.id, expiresAt: null });
    b.t.clock.advance(3650 * DAY);
    expect(await b.subscription(tenant)).toMatchObject({ source: "gift", giftExpiresAt: null, currentPeriodEnd: null });
  });

  it("refuse bad grants", async () => {
    const b = await billingBackend();
    const plan = await b.plan({ name: "G", slug: "g" });
    const tenant = await b.tenant();
    const gift = (body: unknown) => b.admin("POST", `/tenants/${tenant.id}/billing/gift`, body);
    expectError(await gift({ planId: plan.id, expiresAt: new Date(b.t.clock() - 1000).toISOString() }), 400, "invalid_request");
    expectError(await gift({ planId: plan.id, expiresAt: "tomorrow" }), 400, "invalid_request");
    expectError(await gift({ planId: plan.id, days: 0 }), 400, "invalid_request");
    expectError(await gift({ planId: "nope" }), 404, "not_found");
    expectError(await b.admin("POST", `/tenants/${tenant.id}/billing/trial`, { planId: plan.id }), 400, "invalid_request");
    expectError(await b.admin("POST", "/tenants/tnt_nope/billing/gift", { planId: plan.id }), 404, "not_found");
    const stranger = await developerSession(b.t);
    const res = await b.t.request("POST", `/api/v1/admin/apps/${b.t.app.id}/tenants/${tenant.id}/billing/gift`, { developer: stranger, body: { planId: plan.id } });
    expectError(res, 404, "not_found");
    expect(await b.subscription(tenant)).toBeNull();
  });
});

describe("usage counters", () => {
  async function setup(entitlements: Record<string, boolean | number>) {
    const b = await billingBackend();
    await b.settings({ defaultEntitlements: entitlements });
    const tenant = await b.tenant();
    const inc = (key: string, body?: unknown) => b.tenantPost(tenant, `/usage/${key}/increment`, body);
    const get = (key: string, query = "") => b.tenantGet(tenant, `/usage/${key}${query}`);
    return { b, tenant, inc, get };
  }

  it("50 concurrent increments against a limit of 10: exactly 10 succeed", async () => {
    const { inc, get } = await setup({ exports: 10 });
    const results = await Promise.all(Array.from({ length: 50 }, () => inc("exports")));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 402);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(40);
    for (const r of refused) expectError(r, 402, "limit_reached");
    expect(ok.map((r) => r.body.count).sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect((await get("exports")).body).toEqual({ count: 10, period: "monthly", limit: 10 });
  });

  it("count per UTC month and day, with limits from entitlements", async () => {
    const { b, inc, get } = await setup({ api: 5, ai: true, blocked: false });
    expect((await get("api")).body).toEqual({ count: 0, period: "monthly", limit: 5 });
    expect((await inc("api", { by: 3 })).body).toEqual({ count: 3, period: "monthly", limit: 5 });
    const over = await inc("api", { by: 3 });
    expectError(over, 402, "limit_reached");
    expect((await get("api")).body.count).toBe(3);
    expect((await inc("api", { by: 2 })).body.count).toBe(5);
    expect((await inc("api", { period: "daily" })).body).toEqual({ count: 1, period: "daily", limit: 5 });
    expect((await inc("ai", { by: 1000 })).body).toEqual({ count: 1000, period: "monthly", limit: null });
    expect((await get("unlisted")).body).toEqual({ count: 0, period: "monthly", limit: null });
    expectError(await inc("blocked"), 402, "limit_reached");
    expect((await get("blocked")).body).toEqual({ count: 0, period: "monthly", limit: 0 });

    // 2026-01-15 12:00 UTC → the next UTC day keeps the month's count, starts a new day.
    b.t.clock.advance(12 * 60 * 60 * 1000);
    expect((await get("api", "?period=daily")).body.count).toBe(0);
    expect((await get("api")).body.count).toBe(5);
    b.t.clock.set(Date.UTC(2026, 1, 1, 0, 0, 0));
    expect((await get("api")).body.count).toBe(0);
    b.t.clock.set(Date.UTC(2026, 0, 31, 23, 59, 59, 999));
    expect((await get("api")).body.count).toBe(5);
  });

  it("follow the effective plan's limit", async () => {
    const { b, tenant, inc } = await setup({ api: 1 });
    const plan = await b.plan({ name: "Big", slug: "big", entitlements: { api: 3 } });
    await inc("api");
    expectError(await inc("api"), 402, "limit_reached");
    await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId: plan.id });
    expect((await inc("api", { by: 2 })).body).toEqual({ count: 3, period: "monthly", limit: 3 });
    const view = await b.admin("GET", `/tenants/${tenant.id}/billing`);
    expect(view.status).toBe(200);
    expect(view.body.usage).toEqual([{ featureKey: "api", period: "monthly", count: 3, limit: 3 }]);
    expect(view.body.subscription).toMatchObject({ source: "gift", planSlug: "big" });
    expect(view.body.sources).toHaveLength(1);
  });

  it.each([
    ["by 0", "k", { by: 0 }],
    ["negative by", "k", { by: -1 }],
    ["fractional by", "k", { by: 1.5 }],
    ["string by", "k", { by: "2" }],
    ["by over the maximum", "k", { by: 1_000_001 }],
    ["bad period", "k", { period: "weekly" }],
    ["bad feature key", "has%20space", {}],
    ["too long feature key", "k".repeat(65), {}],
  ])("increment refuses %s", async (_name, key, body) => {
    const { inc, get } = await setup({});
    expectError(await inc(key, body), 400, "invalid_request");
    expect((await get("k")).body.count).toBe(0);
  });

  it("GET refuses a bad period", async () => {
    const { get } = await setup({});
    expectError(await get("k", "?period=yearly"), 400, "invalid_request");
  });
});
