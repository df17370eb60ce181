// Issue 45: "Impersonate" on the tenant page opens a new tab with a read-only session as the
// tenant, bannered, showing what the tenant API gives that tenant; ending it is audited.
import { describe, expect, it } from "vitest";
import type { Page } from "puppeteer-core";
import { openDashboard, pageHelpers, PAGE_WAIT } from "./_dashboard.ts";
import { signupTenant } from "./_helpers.ts";

describe("dashboard: impersonate a tenant (issue 45)", { timeout: 90_000 }, () => {
  it("opens the tenant's read-only view in a new tab under a banner, audited, and ends it on request", async () => {
    const d = await openDashboard();
    const tenant = await signupTenant(d.t);
    await d.call("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { title: "Groceries for Sunday" } } });
    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}`);

    const opened = d.page.browserContext().waitForTarget((t) => t.opener() === d.page.target(), { timeout: PAGE_WAIT });
    await d.click("a::-p-text(Impersonate)");
    const tab = (await (await opened).page()) as Page;
    const errors: string[] = [];
    tab.on("pageerror", (e) => errors.push(String(e)));
    const view = pageHelpers(tab, errors);
    await view.seeText(`Viewing as ${tenant.email} — read-only`);
    await view.seeText("Groceries for Sunday");
    await view.seeText("No subscription.");
    expect(await tab.title()).toBe(`Viewing as ${tenant.email} · tenantd`);
    // The view offers no way to change anything: the only button ends the session (and copies its token).
    const buttons = await tab.$$eval("main button", (bs) => bs.map((b) => b.textContent?.trim()));
    expect(buttons).toEqual(["End now", "Copy token"]);

    const trail = async () => (await d.t.backend.admin.listAudit(d.t.app.id, { action: "tenant.impersonat*" })).entries;
    const [entry] = await trail();
    expect(entry).toMatchObject({ action: "tenant.impersonated", tenantId: tenant.id, actor: { type: "developer" } });

    await view.click("button::-p-text(End now)");
    await view.seeText("You ended this session");
    expect((await trail()).map((e) => e.action)).toEqual(["tenant.impersonation_ended", "tenant.impersonated"]);
    // The tenant page lists the ended session as the tenant's.
    await d.page.reload();
    await d.seeText("Ended (impersonation_ended)");
    expect([...d.errors, ...errors]).toEqual([]);
  });
});
