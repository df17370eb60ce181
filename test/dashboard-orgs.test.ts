// The dashboard's organization pages in real Chromium: the app's organizations, one
// organization's members, invites and roles, its deletion and the audit entry it leaves,
// a tenant's page naming its organizations, and an organization's billing card.
import { describe, expect, it } from "vitest";
import { openDashboard, PAGE_WAIT, type Dashboard } from "./_dashboard.ts";
import { signupTenant, type TestTenant } from "./_helpers.ts";
import { form, pathOf } from "./billing-fixtures.ts";

/** The app's own role `recruiter`, and the accept page email invites link to. */
const orgSettings = (d: Dashboard) =>
  d.t.backend.admin.updateApp(d.t.app.id, { settings: { orgs: { roles: { recruiter: { permissions: ["members.invite", "records.read"] } }, inviteUrl: "https://app.example.com/join?t={token}" } } });

/** A team organization owned by `owner`, with `members` more tenants (role recruiter) joined by one invite link, and a pending email invite. */
async function orgWithMembers(d: Dashboard, owner: TestTenant, name: string, members: number) {
  d.t.clock.advance(60_000); // the list is newest first
  const org = (await d.call("POST", "/api/v1/orgs", { bearer: owner.bearer, body: { name } })).body.org as { id: string };
  const link = (await d.call("POST", `/api/v1/orgs/${org.id}/invites`, { bearer: owner.bearer, body: { role: "recruiter" } })).body.invite as { token: string };
  const joined: TestTenant[] = [];
  for (let i = 0; i < members; i++) {
    const t = await signupTenant(d.t, { email: `member${String(i).padStart(2, "0")}-${name.toLowerCase()}@example.com` });
    d.t.clock.advance(1000); // join order is (joinedAt, tenantId): one member a second keeps it the order of this loop
    const res = await d.call("POST", "/api/v1/orgs/invites/accept", { bearer: t.bearer, body: { token: link.token } });
    expect(res.status, res.text).toBe(200);
    joined.push(t);
  }
  await d.call("POST", `/api/v1/orgs/${org.id}/invites`, { bearer: owner.bearer, body: { email: "pending@example.com" } });
  return { ...org, joined };
}

/** A plan "Team" (projects: 100, reports: 3 a month), and a seat limit of 10 for organizations without paid seats. */
async function teamPlan(d: Dashboard) {
  await d.t.backend.admin.updateApp(d.t.app.id, { settings: { corsOrigins: ["https://app.example.com"], orgs: { seats: 10 } } });
  const res = await d.call("POST", `/api/v1/admin/apps/${d.t.app.id}/plans`, {
    developer: d.devToken,
    body: { name: "Team", slug: "team", priceCents: 1200, currency: "usd", interval: "month", entitlements: { projects: 100, reports: 3 } },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.plan as { id: string };
}

/** What the admin API answers about the organization's billing: its subscription and sources. */
async function orgBilling(d: Dashboard, orgId: string) {
  const res = await d.call("GET", `/api/v1/admin/apps/${d.t.app.id}/orgs/${orgId}/billing`, { developer: d.devToken });
  expect(res.status, res.text).toBe(200);
  return { subscription: res.body.subscription, sources: (res.body.sources as { source: string; plan: { name: string } }[]).map((s) => `${s.source}:${s.plan.name}`) };
}

/** Loads the page again (going to the hash already open would not). */
async function reload(d: Dashboard) {
  await d.page.reload();
  await d.page.waitForFunction(() => !document.querySelector(".loading"), { timeout: PAGE_WAIT });
}

const textOf = (d: Dashboard, testId: string) => d.page.$eval(`[data-testid=${testId}]`, (e) => (e as HTMLElement).innerText.replace(/\s+/g, " ").trim());

const rowsOf = (d: Dashboard, testId: string) => d.page.$$eval(`[data-testid=${testId}] tbody tr`, (rows) => rows.map((r) => (r as HTMLElement).innerText.replace(/\s+/g, " ").trim()));

/** The Logs page's audit tab as the developer sees it, and the developer's id. */
async function auditPage(d: Dashboard) {
  const me = (await d.call("GET", "/api/v1/developer/me", { developer: d.devToken })).body.developer.id as string;
  await d.go(`/apps/${d.t.app.id}/logs?tab=audit`);
  await d.page.waitForSelector("[data-testid=audit]", { timeout: PAGE_WAIT });
  return { me, rows: await rowsOf(d, "audit") };
}

describe("dashboard: organizations", { timeout: 180_000 }, () => {
  it("lists the app's organizations, shows one with its members (paged), invites and roles, and the tenant's page links them", async () => {
    const d = await openDashboard();
    const app = d.t.app.id;
    await orgSettings(d);
    const owner = await signupTenant(d.t, { email: "owner@example.com" });
    await orgWithMembers(d, owner, "Globex", 0);
    const acme = await orgWithMembers(d, owner, "Acme", 51);

    await d.go(`/apps/${app}/orgs`);
    expect(await rowsOf(d, "orgs")).toEqual([expect.stringMatching(/^Acme team 52 /), expect.stringMatching(/^Globex team 1 /)]);
    await d.click("a::-p-text(Acme)");
    await d.page.waitForSelector("[data-testid=org-members]", { timeout: PAGE_WAIT });
    expect(await d.page.evaluate(() => document.activeElement?.tagName)).toBe("H1");
    expect(await d.page.evaluate(() => location.hash)).toBe(`#/apps/${app}/orgs/${acme.id}`);
    // The first 50 members in join order: the owner first; "More members" brings the rest.
    let members = await rowsOf(d, "org-members");
    expect(members).toHaveLength(50);
    expect(members[0]).toMatch(/^owner@example\.com owner /);
    expect(members[1]).toMatch(/^member00-acme@example\.com recruiter /);
    await d.click("button::-p-text(More members)");
    await d.page.waitForFunction(() => document.querySelectorAll("[data-testid=org-members] tbody tr").length === 52, { timeout: PAGE_WAIT });
    members = await rowsOf(d, "org-members");
    expect(members[51]).toMatch(/^member50-acme@example\.com recruiter /);
    expect(await d.page.$("button::-p-text(More members)")).toBeNull();
    await d.seeText("52 shown, all of them.");
    // Invites and seats, and the app's own roles with their permissions.
    await d.seeText("Anyone with the link");
    await d.seeText("pending@example.com");
    expect(await d.page.$eval("[data-testid=org-seats]", (e) => (e as HTMLElement).innerText)).toMatch(/^52 members, 1 pending email invite; no seat limit\.$/);
    expect(await rowsOf(d, "org-roles")).toEqual(["recruiter members.invite, records.read"]);

    // A member's email leads to the tenant's page, which lists the tenant's organizations.
    await d.click("a::-p-text(owner@example.com)");
    await d.page.waitForSelector("[data-testid=tenant-orgs]", { timeout: PAGE_WAIT });
    expect((await d.page.$$eval("[data-testid=tenant-orgs] li", (li) => li.map((e) => (e as HTMLElement).innerText))).sort()).toEqual(["Acme — owner", "Globex — owner"]);
    await d.go(`/apps/${app}/tenants/${acme.joined[0]!.id}`);
    await d.page.waitForSelector("[data-testid=tenant-orgs]", { timeout: PAGE_WAIT });
    expect(await d.page.$$eval("[data-testid=tenant-orgs] li", (li) => li.map((e) => (e as HTMLElement).innerText))).toEqual(["Acme — recruiter"]);
    const lonely = await signupTenant(d.t);
    await d.go(`/apps/${app}/tenants/${lonely.id}`);
    await d.seeText("Not a member of any organization.");
    expect(d.errors).toEqual([]);
  });

  it("deletes an organization after its name is typed, and the Logs page shows the audit entry with the developer as actor", async () => {
    const d = await openDashboard();
    const app = d.t.app.id;
    await orgSettings(d);
    const owner = await signupTenant(d.t, { email: "owner@example.com" });
    const org = await orgWithMembers(d, owner, "Initech", 1);
    await d.go(`/apps/${app}/orgs/${org.id}`);
    await d.click("button::-p-text(Delete organization…)");
    await d.page.waitForSelector("dialog[open]");
    const button = "dialog button.danger";
    expect(await d.page.$eval(button, (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await d.fill("dialog input[name=confirm]", "Initech");
    await d.click(button);
    await d.page.waitForFunction(() => location.hash.endsWith("/orgs"), { timeout: PAGE_WAIT });
    await d.seeText("No organizations yet");
    expect((await d.call("GET", `/api/v1/admin/apps/${app}/orgs/${org.id}`, { developer: d.devToken })).status).toBe(404);
    // The members lost the organization, not their accounts.
    expect((await d.call("GET", "/api/v1/orgs", { bearer: org.joined[0]!.bearer })).body.orgs).toEqual([]);

    const { me, rows } = await auditPage(d);
    expect(rows.find((r) => r.includes("org.deleted"))).toContain(`developer ${me} org.deleted ${org.id}`);
    expect(d.errors).toEqual([]);
  });

  it("the Billing card: no plan, a gifted plan with the seats in use, then paid seats, entitlements and usage", async () => {
    const d = await openDashboard();
    const app = d.t.app.id;
    await orgSettings(d);
    const plan = await teamPlan(d);
    const owner = await signupTenant(d.t, { email: "owner@example.com" });
    const org = await orgWithMembers(d, owner, "Acme", 2);

    await d.go(`/apps/${app}/orgs/${org.id}`);
    await d.seeText("Billing");
    expect(await textOf(d, "subscription")).toBe("No subscription: the app's default entitlements apply.");
    expect(await textOf(d, "org-billing-seats")).toBe("Paid seats None: the app's limit of 10 seats (orgs.seats) applies Seats in use 3 members, 1 pending email invite; 6 free");

    // A gift grants the plan's entitlements, not seats.
    const gift = await d.call("POST", `/api/v1/admin/apps/${app}/orgs/${org.id}/billing/gift`, { developer: d.devToken, body: { planId: plan.id } });
    expect(gift.status, gift.text).toBe(200);
    const used = await d.call("POST", `/api/v1/orgs/${org.id}/billing/usage/reports/increment`, { bearer: org.joined[0]!.bearer, body: { by: 2 } });
    expect(used.status, used.text).toBe(200);
    await reload(d);
    await d.seeText("from gift");
    expect(await textOf(d, "subscription")).toBe("Team — active, from gift");
    expect(await textOf(d, "entitlements")).toBe("projects 100 reports 3");
    expect(await rowsOf(d, "usage")).toEqual(["reports monthly 2 3"]);
    expect(await textOf(d, "org-billing-seats")).toContain("Paid seats None: the app's limit of 10 seats (orgs.seats) applies");

    // The owner buys 5 seats (development checkout): the paid plan comes first and its seats are the limit.
    const checkout = await d.call("POST", `/api/v1/orgs/${org.id}/billing/checkout`, {
      bearer: owner.bearer,
      body: { planId: plan.id, seats: 5, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" },
    });
    expect(checkout.status, checkout.text).toBe(200);
    expect((await d.t.request("POST", pathOf(checkout.body.url), form({ action: "confirm" }))).status).toBe(303);
    await reload(d);
    await d.seeText("from paid subscription");
    expect(await textOf(d, "subscription")).toMatch(/^Team — active, from paid subscription/);
    expect(await textOf(d, "org-billing-seats")).toBe("Paid seats 5 (the Stripe subscription's quantity) Seats in use 3 members, 1 pending email invite; 1 free");
    await d.seeText("Other sources: gift (Team, active); paid subscription (Team, active, 5 seats)");
    expect(d.errors).toEqual([]);
  });

  it("gives a plan, starts a trial and takes both back from the card, behind the confirmation; the API and the audit trail show each", async () => {
    const d = await openDashboard();
    const app = d.t.app.id;
    await teamPlan(d);
    const owner = await signupTenant(d.t, { email: "owner@example.com" });
    const org = await orgWithMembers(d, owner, "Hooli", 0);
    await d.go(`/apps/${app}/orgs/${org.id}`);
    await d.seeText("Gift a plan");

    await d.click("button::-p-text(Gift plan)");
    await d.seeText("Plan gifted.");
    // The notice comes first; the card then reloads.
    await d.seeText("from gift");
    expect(await textOf(d, "subscription")).toBe("Team — active, from gift");
    expect(await orgBilling(d, org.id)).toMatchObject({ subscription: { planName: "Team", source: "gift", seats: null }, sources: ["gift:Team"] });

    await d.click("button::-p-text(Start trial…)");
    await d.page.waitForSelector("dialog[open]");
    const changes = await textOf(d, "trial-changes");
    expect(changes).toMatch(/^The organization gets Team's entitlements for 14 days/);
    expect(changes).toContain("A gift comes first");
    await d.click("dialog button[type=submit]");
    await d.seeText("Trial of Team started for 14 days.");
    expect((await orgBilling(d, org.id)).sources.sort()).toEqual(["gift:Team", "trial:Team"]);

    await d.click("button::-p-text(Revoke gift…)");
    await d.page.waitForSelector("dialog[open]");
    await d.seeText("The organization loses the gifted plan's entitlements at once.");
    await d.click("dialog button[type=submit]");
    await d.seeText("Gift revoked.");
    expect(await orgBilling(d, org.id)).toMatchObject({ subscription: { source: "trial" }, sources: ["trial:Team"] });

    await d.click("button::-p-text(End trial…)");
    await d.page.waitForSelector("dialog[open]");
    await d.click("dialog button[type=submit]");
    await d.seeText("Trial ended.");
    await d.seeText("No subscription: the app's default entitlements apply.");
    expect(await orgBilling(d, org.id)).toEqual({ subscription: null, sources: [] });

    const audit = await auditPage(d);
    const rows = audit.rows.filter((r) => r.includes("org.subscription.updated"));
    expect(rows).toHaveLength(4);
    for (const row of rows) expect(row).toContain(`developer ${audit.me} org.subscription.updated ${org.id}`);
    expect(d.errors).toEqual([]);
  });
});
