// Issue 45's six major dashboard defects, each driven in real Chromium against a real
// tenantd over HTTP: what a developer does, and what they (or their screen reader) get.
import { describe, expect, it, vi } from "vitest";
import { openDashboard, PAGE_WAIT, PHONE, type Dashboard } from "./_dashboard.ts";
import { signupTenant } from "./_helpers.ts";
import { startReceiver } from "./_webhook-receiver.ts";

const admin = (d: Dashboard, path = "") => `/api/v1/admin/apps/${d.t.app.id}${path}`;

async function plan(d: Dashboard, name: string, archived = false) {
  const res = await d.call("POST", admin(d, "/plans"), { developer: d.devToken, body: { name, slug: name.toLowerCase(), priceCents: 500, currency: "usd", interval: "month", entitlements: { [name.toLowerCase()]: true } } });
  expect(res.status, res.text).toBe(201);
  if (archived) expect((await d.call("POST", admin(d, `/plans/${res.body.plan.id}/archive`), { developer: d.devToken })).status).toBe(200);
  return res.body.plan as { id: string; name: string };
}

const billingSources = async (d: Dashboard, tenantId: string) =>
  (await d.call("GET", admin(d, `/tenants/${tenantId}/billing`), { developer: d.devToken })).body.sources.map((s: { source: string; plan: { name: string } }) => `${s.source}:${s.plan.name}`);

const url = (d: Dashboard) => d.page.evaluate(() => location.hash);

/** Focuses a button and presses Enter, as a keyboard user opens its dialog; returns what has the focus then. */
async function openWithKeyboard(d: Dashboard, text: string) {
  await d.page.focus(`button::-p-text(${text})`);
  await d.page.keyboard.press("Enter");
  await d.page.waitForSelector("dialog[open]");
  return d.focused();
}

/** Presses a key that closes the open dialog; returns what has the focus after. */
async function closeWith(d: Dashboard, key: "Enter" | "Escape") {
  await d.page.keyboard.press(key);
  await d.page.waitForFunction(() => !document.querySelector("dialog[open]"));
  return d.focused();
}

describe("dashboard defects (issue 45)", { timeout: 90_000 }, () => {
  it("1. a trial is of an offered plan, bounded, confirmed with what changes, and can be ended", async () => {
    const d = await openDashboard();
    await plan(d, "Old", true);
    await plan(d, "Pro");
    const tenant = await signupTenant(d.t);
    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}`);
    await d.seeText("Start a trial");
    const options = await d.page.$$eval("form[aria-label='Start a trial'] select[name=planId] option", (os) => os.map((o) => o.textContent));
    expect(options).toEqual(["Pro"]);

    // 5,000 days is refused by the form itself: nothing is asked, nothing saved.
    await d.fill("form[aria-label='Start a trial'] input[name=days]", "5000");
    await d.click("button::-p-text(Start trial…)");
    expect(await d.page.$("dialog[open]")).toBeNull();
    expect(await billingSources(d, tenant.id)).toEqual([]);

    await d.fill("form[aria-label='Start a trial'] input[name=days]", "14");
    await d.click("button::-p-text(Start trial…)");
    await d.page.waitForSelector("dialog[open]");
    expect(await d.page.$eval("[data-testid=trial-changes]", (e) => (e as HTMLElement).innerText)).toMatch(/Pro's entitlements for 14 days/);
    expect(await billingSources(d, tenant.id)).toEqual([]);
    await d.click("dialog button[type=submit]");
    await d.seeText("Trial of Pro started for 14 days.");
    expect(await billingSources(d, tenant.id)).toEqual(["trial:Pro"]);

    // Replacing says so before it happens.
    await d.click("button::-p-text(Replace trial…)");
    await d.page.waitForSelector("dialog[open]");
    expect(await d.page.$eval("[data-testid=trial-changes]", (e) => (e as HTMLElement).innerText)).toMatch(/replaces the current trial of Pro/);
    await d.click("dialog button::-p-text(Cancel)");

    await d.click("button::-p-text(End trial…)");
    await d.page.waitForSelector("dialog[open]");
    await d.click("dialog button[type=submit]");
    await d.seeText("Trial ended.");
    expect(await billingSources(d, tenant.id)).toEqual([]);
    await d.seeText("No subscription: the app's default entitlements apply.");

    // The server refuses an archived plan's trial whoever asks.
    const archived = (await d.call("GET", admin(d, "/plans?archived=true"), { developer: d.devToken })).body.plans.find((p: { name: string }) => p.name === "Old");
    const refused = await d.call("POST", admin(d, `/tenants/${tenant.id}/billing/trial`), { developer: d.devToken, body: { planId: archived.id, days: 7 } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/archived/);
  });

  it("2. an empty number setting is an error on its field or 'no cap', never 0", async () => {
    const d = await openDashboard();
    await d.go(`/apps/${d.t.app.id}/settings`);
    await d.fill("input[name=defaultQuota]", "");
    await d.click("button::-p-text(Save quotas)");
    await d.seeText("Invite tokens per tenant: enter a number");
    expect(await d.focused()).toMatchObject({ name: "defaultQuota", invalid: "true" });
    const describedBy = (await d.focused())!.describedBy!;
    expect(await d.page.$eval(`#${describedBy}`, (e) => e.textContent)).toMatch(/enter a number/);
    expect(await d.text()).not.toContain("Saved");
    expect((await d.t.backend.admin.getApp(d.t.app.id)).settings.invites).toEqual({ defaultQuota: 5 });

    await d.fill("input[name=defaultQuota]", "3");
    await d.fill("input[name=records]", "");
    expect(await d.page.$eval("input[name=recordMb]", (e) => (e as HTMLInputElement).value)).toBe("1024");
    await d.fill("input[name=recordMb]", "5");
    await d.click("button::-p-text(Save quotas)");
    await d.seeText("Saved");
    const settings = (await d.t.backend.admin.getApp(d.t.app.id)).settings;
    expect(settings.invites).toEqual({ defaultQuota: 3 });
    expect((settings.quotas as { records: number | null }).records).toBeNull();
    expect((settings.quotas as { recordBytes: number | null }).recordBytes).toBe(5 * 1024 * 1024);
    // "No cap" reads back as an empty box, not 0.
    await d.page.reload();
    await d.seeText("Quotas");
    expect(await d.page.$eval("input[name=records]", (e) => (e as HTMLInputElement).value)).toBe("");
    expect(await d.page.$eval("input[name=recordMb]", (e) => (e as HTMLInputElement).value)).toBe("5");
  });

  it("3. the tenants list, the records filter and the delivery log keep their view in the URL", async () => {
    const d = await openDashboard();
    for (let i = 0; i < 60; i += 20) await Promise.all(Array.from({ length: 20 }, (_, j) => signupTenant(d.t, { email: `person${String(i + j).padStart(2, "0")}@example.com` })));
    await d.go(`/apps/${d.t.app.id}/tenants`);
    await d.seeText("Page 1 of 3 (60 in all)");
    await d.fill("input[name=email]", "person");
    await d.page.select("select[name=sort]", "email");
    await d.click("form[role=search] button[type=submit]");
    await d.page.waitForFunction(() => location.hash.includes("email=person"));
    // The searched list's first page is shown (and its pager enabled) before paging on: the
    // list before the search also reads "Page 1 of 3 (60 in all)", so wait for the search's
    // own first row (sorted by email) and for the pager to have stopped loading.
    await d.seeText("Page 1 of 3 (60 in all)");
    await d.page.waitForFunction(
      () => document.querySelector("tbody tr td a")?.textContent === "person00@example.com" && !document.querySelector("nav.pager")?.textContent?.includes("loading"),
      { timeout: PAGE_WAIT },
    );
    await d.page.waitForFunction(() => [...document.querySelectorAll("button")].some((b) => b.textContent === "Next" && !b.disabled));
    await d.page.$eval("button::-p-text(Next)", (b) => (b as HTMLButtonElement).click());
    await d.seeText("Page 2 of 3 (60 in all)");
    expect(await url(d)).toBe(`#/apps/${d.t.app.id}/tenants?email=person&sort=email&offset=25`);
    const firstOfPage2 = await d.page.$eval("tbody tr td a", (e) => e.textContent);
    expect(firstOfPage2).toBe("person25@example.com");

    await d.page.reload();
    await d.seeText("Page 2 of 3 (60 in all)");
    expect(await d.page.$eval("input[name=email]", (e) => (e as HTMLInputElement).value)).toBe("person");
    expect(await d.page.$eval("select[name=sort]", (e) => (e as HTMLSelectElement).value)).toBe("email");
    expect(await d.page.$eval("tbody tr td a", (e) => e.textContent)).toBe("person25@example.com");
    await d.page.goBack();
    await d.seeText("Page 1 of 3 (60 in all)");
    expect(await url(d)).toBe(`#/apps/${d.t.app.id}/tenants?email=person&sort=email`);

    // Records: the applied filter survives a reload.
    const owner = await signupTenant(d.t);
    for (let n = 1; n <= 4; n++) expect((await d.call("POST", "/api/v1/data/notes", { bearer: owner.bearer, body: { data: { n } } })).status).toBe(201);
    await d.go(`/apps/${d.t.app.id}/tenants/${owner.id}/records/notes`);
    await d.seeText("4 records");
    await d.fill("input[name=filter]", '{"n": {"$gte": 3}}');
    await d.click("button::-p-text(Apply)");
    await d.seeText("2 records");
    await d.page.reload();
    await d.seeText("2 records");
    expect(await d.page.$eval("input[name=filter]", (e) => (e as HTMLInputElement).value)).toBe('{"n": {"$gte": 3}}');

    // Delivery log: the status filter too.
    await d.go(`/apps/${d.t.app.id}/webhooks`);
    await d.page.select("select[name=status]", "failed");
    await d.page.waitForFunction(() => location.hash.endsWith("?status=failed"));
    await d.page.reload();
    await d.seeText("Delivery log");
    expect(await d.page.$eval("select[name=status]", (e) => (e as HTMLSelectElement).value)).toBe("failed");
  });

  it("4. resend verification tells the truth, and Settings and Webhooks warn when emails would be lost", async () => {
    const d = await openDashboard();
    const tenant = await signupTenant(d.t);
    await d.t.backend.admin.updateApp(d.t.app.id, { settings: { email: { sendEmail: false } } });
    await d.go(`/apps/${d.t.app.id}/settings`);
    await d.seeText("Verification emails are lost.");
    await d.go(`/apps/${d.t.app.id}/webhooks`);
    await d.seeText("Verification emails are lost.");

    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}`);
    await d.click("button::-p-text(Resend verification)");
    await d.seeText("Nothing would deliver this email");
    expect(await d.text()).not.toContain("webhook fired");

    const receiver = await startReceiver();
    await d.t.backend.admin.setWebhookUrl(d.t.app.id, receiver.url);
    await d.go(`/apps/${d.t.app.id}/webhooks`);
    await d.seeText("Endpoint");
    expect(await d.page.$("[data-testid=email-warning]")).toBeNull();
    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}`);
    await d.click("button::-p-text(Resend verification)");
    await d.seeText("Verification webhook fired");
    await vi.waitFor(() => expect(receiver.received.map((r) => JSON.parse(r.raw.toString()).event)).toContain("tenant.email.resend_verification"));
  });

  it("5. a confirmation opens on Cancel, so Enter, Enter changes nothing, and gives the focus back", async () => {
    const d = await openDashboard();
    const tenant = await signupTenant(d.t);
    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}`);
    await d.seeText("Sign out everywhere");
    expect(await openWithKeyboard(d, "Sign out everywhere")).toMatchObject({ tag: "button", text: "Cancel" });
    expect(await closeWith(d, "Enter")).toMatchObject({ tag: "button", text: "Sign out everywhere" });
    const sessions = (await d.call("GET", admin(d, `/tenants/${tenant.id}/overview`), { developer: d.devToken })).body.sessions;
    expect(sessions.filter((s: { active: boolean }) => s.active)).toHaveLength(1);

    // A typed confirmation opens on its box; Escape closes it and the focus returns too.
    expect(await openWithKeyboard(d, "Delete tenant…")).toMatchObject({ tag: "input", name: "confirm" });
    expect(await closeWith(d, "Escape")).toMatchObject({ tag: "button", text: "Delete tenant…" });
  });

  it("6. a route change moves the focus to the new heading and sets the title; a skip link; a failed form keeps focus on its field", async () => {
    const d = await openDashboard();
    await d.go("/apps");
    expect(await d.page.title()).toBe("Apps · tenantd");
    await d.page.keyboard.press("Tab");
    expect(await d.focused()).toMatchObject({ tag: "a", text: "Skip to content" });
    await d.page.keyboard.press("Enter");
    expect(await d.page.evaluate(() => document.activeElement?.id)).toBe("main");
    expect(await url(d)).toBe("#/apps");

    await d.click(`a[href='#/apps/${d.t.app.id}']`);
    await d.page.waitForFunction(() => document.activeElement?.tagName === "H1");
    const app = await d.t.backend.admin.getApp(d.t.app.id);
    expect(await d.focused()).toMatchObject({ tag: "h1", text: app.name });
    expect(await d.page.title()).toBe(`${app.name} overview · tenantd`);
    await d.click("nav.tabs a::-p-text(Tenants)");
    await d.page.waitForFunction(() => document.activeElement?.tagName === "H1" && document.activeElement.textContent === "Tenants");
    expect(await d.page.title()).toBe(`Tenants · ${app.name} · tenantd`);

    // A failed sign-in leaves the focus on the password, marked invalid and described.
    await d.click("button::-p-text(Sign out)");
    await d.seeText("Sign in to tenantd");
    await d.fill("input[name=email]", "dev@example.com");
    await d.fill("input[name=password]", "wrong password");
    await d.page.keyboard.press("Enter");
    await d.seeText("Wrong email or password.");
    const focused = await d.focused();
    expect(focused).toMatchObject({ name: "password", invalid: "true" });
    expect(await d.page.$eval(`#${focused!.describedBy}`, (e) => e.textContent)).toBe("Wrong email or password.");
  });

  it("an ended session says so on the sign-in page instead of signing out silently", async () => {
    const d = await openDashboard({}, PHONE);
    await d.go("/apps");
    const cookie = (await d.page.cookies()).find((c) => c.name === "tenantd_dashboard")!;
    await d.call("DELETE", "/_/session", { headers: { cookie: `${cookie.name}=${cookie.value}`, origin: d.url, "x-dashboard-csrf": await d.page.evaluate(async () => (await (await fetch("session")).json()).csrfToken) } });
    await d.click("a::-p-text(Usage)");
    await d.seeText("Your dashboard session ended");
    await d.seeText("Sign in to tenantd");
  });
});
