// The dashboard's organization pages in real Chromium: the app's organizations, one
// organization's members, invites and roles, its deletion and the audit entry it leaves,
// and a tenant's page naming its organizations.
import { describe, expect, it } from "vitest";
import { openDashboard, PAGE_WAIT, type Dashboard } from "./_dashboard.ts";
import { signupTenant, type TestTenant } from "./_helpers.ts";

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

const rowsOf = (d: Dashboard, testId: string) => d.page.$$eval(`[data-testid=${testId}] tbody tr`, (rows) => rows.map((r) => (r as HTMLElement).innerText.replace(/\s+/g, " ").trim()));

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

    const me = (await d.call("GET", "/api/v1/developer/me", { developer: d.devToken })).body.developer.id as string;
    await d.go(`/apps/${app}/logs?tab=audit`);
    await d.page.waitForSelector("[data-testid=audit]", { timeout: PAGE_WAIT });
    const rows = await rowsOf(d, "audit");
    expect(rows.find((r) => r.includes("org.deleted"))).toContain(`developer ${me} org.deleted ${org.id}`);
    expect(d.errors).toEqual([]);
  });
});
