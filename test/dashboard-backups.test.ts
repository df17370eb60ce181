// Issue 45: the Backups page in real Chromium. An operator developer makes a backup with
// the password again, sees it listed, and downloads it through a one-use link; another
// developer sees only how the operator grants the right. SQLite only (vitest.config.ts).
import { describe, expect, it } from "vitest";
import { DEV, openDashboard, PAGE_WAIT } from "./_dashboard.ts";

describe("dashboard: backups (issue 45)", { timeout: 90_000 }, () => {
  it("an operator makes, lists and downloads a backup; without the right the page says who grants it", async () => {
    const d = await openDashboard();
    await d.go("/backups");
    await d.seeText("tenantd developer operator");
    expect(await d.page.$("form[aria-label='Make a backup']")).toBeNull();

    const me = (await d.call("GET", "/api/v1/developer/me", { developer: d.devToken })).body.developer.id as string;
    await d.t.backend.core.db.developers.setBackupOperator(me, true, d.t.clock());
    await d.page.reload();
    await d.fill("form[aria-label='Make a backup'] input[name=password]", "not my password");
    await d.click("button::-p-text(Make backup)");
    await d.seeText("Wrong password");
    expect(await d.focused()).toMatchObject({ name: "password", invalid: "true" });
    await d.fill("form[aria-label='Make a backup'] input[name=password]", DEV.password);
    await d.click("button::-p-text(Make backup)");
    await d.seeText("written (");
    const name = (await d.call("GET", "/api/v1/admin/backups", { developer: d.devToken })).body.backups[0].name as string;
    await d.seeText(name);

    await d.click(`button[aria-label='Download ${name}']`);
    await d.fill(`form[aria-label='Download ${name}'] input[name=password]`, DEV.password);
    const download = d.page.waitForResponse((r) => r.url().includes("/_/api/admin/backups/download/"), { timeout: PAGE_WAIT });
    // The browser saves the file; the test only watches the answer come.
    const cdp = await d.page.createCDPSession();
    await cdp.send("Browser.setDownloadBehavior", { behavior: "deny" }).catch(() => undefined);
    await d.click(`form[aria-label='Download ${name}'] button[type=submit]`);
    const res = await download;
    expect(res.status()).toBe(200);
    expect(res.headers()["content-disposition"]).toBe(`attachment; filename="${name}"`);
    const trail = await d.t.backend.admin.listAudit(d.t.app.id, { action: "backup.*" });
    expect(trail.entries.map((e) => e.action)).toEqual(["backup.downloaded", "backup.created"]);
    // The one failed request is the wrong password's 401.
    expect(d.errors).toEqual(["Failed to load resource: the server responded with a status of 401 ()"]);
  });
});
