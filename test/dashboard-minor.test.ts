// Issue 45's minor dashboard list, in real Chromium: page loads, slow and failing answers,
// narrow screens, the settings a developer could not reach, and names a screen reader reads.
import type { HTTPRequest } from "puppeteer-core";
import { describe, expect, it } from "vitest";
import { mailerFor } from "../src/email/mailer.ts";
import { openDashboard, PAGE_WAIT, PHONE, type Dashboard } from "./_dashboard.ts";
import { signupTenant } from "./_helpers.ts";
import { startReceiver } from "./_webhook-receiver.ts";

/** Holds the requests whose URL matches until `release()`; every other request goes on. */
async function holdRequests(d: Dashboard, match: RegExp) {
  const held: HTTPRequest[] = [];
  let holding = true;
  await d.page.setRequestInterception(true);
  d.page.on("request", (req) => {
    if (req.isInterceptResolutionHandled()) return;
    if (holding && match.test(req.url())) held.push(req);
    else void req.continue();
  });
  return {
    held,
    async release() {
      holding = false;
      for (const r of held.splice(0)) await r.continue();
    },
  };
}

/** Page width the layout needs beyond the screen's: 0 when nothing scrolls sideways. */
const overflow = (d: Dashboard) => d.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** Accessible names shared by more than one button on the page. */
const repeatedButtonNames = (d: Dashboard) =>
  d.page.evaluate(() => {
    const names = [...document.querySelectorAll("button")].map((b) => b.getAttribute("aria-label") ?? b.textContent!.trim());
    return [...new Set(names.filter((n, i) => names.indexOf(n) !== i))];
  });

describe("dashboard minor fixes (issue 45)", { timeout: 90_000 }, () => {
  it("a page load makes at most 6 requests, the tenants page included", async () => {
    const d = await openDashboard();
    await signupTenant(d.t);
    const urls: string[] = [];
    d.page.on("request", (r) => urls.push(new URL(r.url()).pathname));
    await d.go("/apps");
    await d.seeText("Create an app");
    expect(urls.length, urls.join("\n")).toBeLessThanOrEqual(6);
    urls.length = 0;
    await d.page.goto(`${d.url}/_/#/apps/${d.t.app.id}/tenants`);
    await d.page.waitForSelector("tbody tr");
    expect(urls.length, urls.join("\n")).toBeLessThanOrEqual(6);
    // A second load reuses the script and stylesheet from the cache.
    urls.length = 0;
    const fromNetwork: string[] = [];
    d.page.on("requestfinished", (r) => !r.response()?.fromCache() && fromNetwork.push(new URL(r.url()).pathname));
    await d.page.reload();
    await d.page.waitForSelector("tbody tr");
    expect(fromNetwork.filter((p) => p.includes("/assets/"))).toEqual([]);
  });

  it("the pager names the page shown until the next page's rows arrive", async () => {
    const d = await openDashboard();
    await Promise.all(Array.from({ length: 30 }, () => signupTenant(d.t)));
    await d.go(`/apps/${d.t.app.id}/tenants`);
    await d.seeText("Page 1 of 2 (30 in all)");
    const hold = await holdRequests(d, /\/tenants\?.*offset=25/);
    await d.click("button::-p-text(Next)");
    await d.page.waitForFunction(() => document.body.innerText.includes("loading…"));
    // The page says "loading…" as it sends the request; the browser reports the request a moment later.
    await expect.poll(() => hold.held.length).toBe(1);
    expect(await d.text()).toContain("Page 1 of 2 (30 in all) · loading…");
    expect(await d.page.$eval("button::-p-text(Next)", (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await hold.release();
    await d.seeText("Page 2 of 2 (30 in all)");
    expect(await d.page.$$eval("tbody tr", (rows) => rows.length)).toBe(5);
  });

  it("moving to another app by URL never shows the first app's data under it", async () => {
    const d = await openDashboard();
    const other = (await d.call("POST", "/api/v1/admin/apps", { developer: d.devToken, body: { name: "Second app" } })).body.app;
    const first = await d.t.backend.admin.getApp(d.t.app.id);
    await d.go(`/apps/${first.id}/settings`);
    await d.seeText("Sign-up mode");
    const hold = await holdRequests(d, new RegExp(`/api/admin/apps/${other.id}$`));
    await d.page.evaluate((id) => (location.hash = `#/apps/${id}/settings`), other.id);
    await d.page.waitForFunction(() => document.body.innerText.includes("Loading…"));
    expect(await d.text()).not.toContain(first.name);
    await hold.release();
    await d.seeText("Second app");
    expect(await d.page.title()).toBe("Settings · Second app · tenantd");
  });

  it("an HTML error page from a proxy reads as a sentence; a script that never loads is said after a few seconds", async () => {
    const d = await openDashboard();
    await d.page.setRequestInterception(true);
    d.page.on("request", (req) => {
      if (req.url().endsWith("/api/admin/apps")) void req.respond({ status: 502, contentType: "text/html", body: "<html><body><h1>502 Bad Gateway</h1></body></html>" });
      else if (/\/assets\/app-[^/]+\.js$/.test(req.url()) && req.url().includes("?broken")) void req.abort();
      else void req.continue();
    });
    await d.page.goto(`${d.url}/_/#/apps`);
    await d.seeText("The server answered 502");
    expect(await d.text()).not.toMatch(/Unexpected token|JSON/);

    // The script fails to load: the page does not stay on "Loading…".
    const html = await (await fetch(`${d.url}/_/`)).text();
    const script = /src="(assets\/app-[^"]+)"/.exec(html)![1]!;
    await d.page.setContent(html.replace(script, `${d.url}/_/${script}?broken`), { waitUntil: "domcontentloaded" });
    await d.page.waitForFunction(() => getComputedStyle(document.querySelector(".boot-failed")!).visibility === "visible", { timeout: 15_000 });
    expect(await d.page.$eval(".boot-failed", (e) => e.textContent)).toMatch(/script did not load/);
  });

  it("at 390 px nothing scrolls sideways: webhooks, outbox, a long tenant email", async () => {
    const d = await openDashboard({}, PHONE);
    const receiver = await startReceiver();
    await d.t.backend.admin.setWebhookUrl(d.t.app.id, `${receiver.url}&a-very-long-query-string-that-goes-on=and-on-and-on-and-on`);
    const tenant = await signupTenant(d.t, { email: `a.really.long.address.of.somebody.${"x".repeat(40)}@example-company-domain.com` });
    await d.call("POST", `/api/v1/admin/apps/${d.t.app.id}/event-webhook-config/test`, { developer: d.devToken });
    await d.call("POST", `/api/v1/admin/apps/${d.t.app.id}/tenants/${tenant.id}/resend-verification`, { developer: d.devToken });
    await mailerFor(d.t.backend.core).idle();
    for (const page of ["webhooks", "outbox", `tenants/${tenant.id}`, "settings", "tenants"]) {
      await d.go(`/apps/${d.t.app.id}/${page}`);
      await d.page.waitForSelector("h1");
      expect(await overflow(d), page).toBeLessThanOrEqual(0);
    }
  });

  it("social login: unconfigured providers are not 'Enabled', a client id needs its secret, and the callback URLs and Stripe endpoint are shown", async () => {
    const d = await openDashboard();
    await d.go(`/apps/${d.t.app.id}/settings`);
    await d.seeText("Social login");
    expect(await d.page.$$eval("input[name$='.enabled']:checked", (els) => els.length)).toBe(0);
    expect(await d.page.$eval("[data-testid=callback-github]", (e) => e.textContent)).toBe("http://localhost:3000/api/v1/auth/oauth/github/callback");
    expect(await d.page.$eval("[data-testid=stripe-endpoint]", (e) => e.textContent)).toBe(`http://localhost:3000/api/v1/billing/stripe/webhook/${d.t.app.id}`);

    await d.fill("input[name='github.clientId']", "Iv1.abc");
    await d.click("button::-p-text(Save social login)");
    await d.seeText("github: enter the client secret too");
    expect(await d.focused()).toMatchObject({ name: "github.clientSecret", invalid: "true" });
    expect((await d.t.backend.admin.getApp(d.t.app.id)).settings.oauth).toMatchObject({ providers: {} });
    await d.fill("input[name='github.clientSecret']", "s3cret");
    await d.click("input[name='github.enabled']");
    await d.click("button::-p-text(Save social login)");
    await d.seeText("Saved");
    expect((await d.t.backend.admin.getApp(d.t.app.id)).settings.oauth).toMatchObject({ providers: { github: { clientId: "Iv1.abc", enabled: true } } });
  });

  it("default entitlements and the signup trial are editable", async () => {
    const d = await openDashboard();
    const plan = (await d.call("POST", `/api/v1/admin/apps/${d.t.app.id}/plans`, { developer: d.devToken, body: { name: "Pro", slug: "pro", priceCents: 500, currency: "usd", interval: "month", entitlements: { pro: true } } })).body.plan;
    await d.go(`/apps/${d.t.app.id}/settings`);
    await d.seeText("Default entitlements");
    await d.click("form[aria-labelledby=s-entitlements] button::-p-text(Add entitlement)");
    await d.fill("input[name=default-key-0]", "projects");
    await d.page.select("select[name=default-type-0]", "number");
    await d.fill("input[name=default-value-0]", "2");
    await d.click("button::-p-text(Save default entitlements)");
    await d.seeText("Saved");
    await d.page.select("select[name=trialPlan]", plan.id);
    await d.fill("input[name=trialDays]", "7");
    await d.click("button::-p-text(Save signup trial)");
    await d.page.waitForFunction(() => document.querySelectorAll("[role=status].ok").length >= 2);
    const billing = (await d.t.backend.admin.getApp(d.t.app.id)).settings.billing as Record<string, unknown>;
    expect(billing).toMatchObject({ defaultEntitlements: { projects: 2 }, trial: { planId: plan.id, days: 7 } });
    const tenant = await signupTenant(d.t);
    const sources = (await d.call("GET", `/api/v1/admin/apps/${d.t.app.id}/tenants/${tenant.id}/billing`, { developer: d.devToken })).body.sources;
    expect(sources.map((s: { source: string }) => s.source)).toEqual(["trial"]);
  });

  it("every Copy and Details button has its own accessible name", async () => {
    const d = await openDashboard();
    const receiver = await startReceiver();
    await d.t.backend.admin.setWebhookUrl(d.t.app.id, receiver.url);
    for (let i = 0; i < 3; i++) await d.call("POST", `/api/v1/admin/apps/${d.t.app.id}/event-webhook-config/test`, { developer: d.devToken });
    await d.go(`/apps/${d.t.app.id}`);
    await d.seeText("Publishable key");
    expect(await repeatedButtonNames(d)).toEqual([]);
    await d.go(`/apps/${d.t.app.id}/webhooks`);
    await d.page.waitForFunction(() => document.querySelectorAll("[data-testid=deliveries] tbody tr").length === 3, { timeout: PAGE_WAIT });
    expect(await repeatedButtonNames(d)).toEqual([]);
    await d.go(`/apps/${d.t.app.id}/settings`);
    await d.seeText("Social login");
    expect(await repeatedButtonNames(d)).toEqual([]);
  });
});
