// The records browser updates live in real Chromium: records a tenant creates, changes and
// deletes through the API while the page is open appear, change and go without a reload.
import { describe, expect, it } from "vitest";
import { openDashboard, PAGE_WAIT, type Dashboard } from "./_dashboard.ts";
import { signupTenant, type TestTenant } from "./_helpers.ts";
import { hashToken } from "../src/crypto/random.ts";

const ids = (d: Dashboard) => d.page.$$eval("ol.records > li code", (codes) => codes.map((c) => c.textContent));
const total = (d: Dashboard) => d.page.$eval("[data-testid=record-total]", (e) => e.textContent);
const waitFor = (d: Dashboard, fn: () => boolean) => d.page.waitForFunction(fn, { timeout: PAGE_WAIT });

async function openLive(d: Dashboard, tenant: TestTenant, query = "") {
  await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}/records/notes${query}`);
  await waitFor(d, () => document.querySelector("[data-testid=live]")?.textContent === "Live");
}

describe("dashboard: the records browser is live", { timeout: 120_000 }, () => {
  it("shows a record created through the API at the top, then its change and its deletion, without a reload", async () => {
    const d = await openDashboard();
    const tenant = await signupTenant(d.t);
    const api = (method: string, path: string, body?: unknown) => d.call(method, path, { bearer: tenant.bearer, ...(body === undefined ? {} : { body }) });
    const old = (await api("POST", "/api/v1/data/notes", { data: { title: "already here" } })).body.record;
    await openLive(d, tenant);
    // Nothing reloads the page from here on: a marker on the window would be gone.
    await d.page.evaluate(() => ((window as unknown as { marker: number }).marker = 1));
    expect(await ids(d)).toEqual([old.id]);

    d.t.clock.advance(1000);
    const made = (await api("POST", "/api/v1/data/notes", { data: { title: "made while watching" } })).body.record;
    await d.seeText("made while watching");
    expect(await ids(d)).toEqual([made.id, old.id]);
    expect(await total(d)).toBe("2 records");

    await api("PUT", `/api/v1/data/notes/${made.id}`, { data: { title: "changed while watching" } });
    await d.seeText("changed while watching");
    expect(await d.text()).not.toContain("made while watching");

    expect((await api("DELETE", `/api/v1/data/notes/${made.id}`)).status).toBe(204);
    await waitFor(d, () => !document.body.innerText.includes("changed while watching"));
    expect(await ids(d)).toEqual([old.id]);
    expect(await total(d)).toBe("1 record");
    // Another tenant's record in the same collection never shows.
    const other = await signupTenant(d.t);
    await d.call("POST", "/api/v1/data/notes", { bearer: other.bearer, body: { data: { title: "not this tenant's" } } });
    await api("POST", "/api/v1/data/todos", { data: { title: "another collection" } });
    const last = (await api("POST", "/api/v1/data/notes", { data: { title: "the tenant's own" } })).body.record;
    await d.seeText("the tenant's own");
    expect(await ids(d)).toEqual([last.id, old.id]);
    expect(await d.page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);
    expect(d.errors).toEqual([]);
  });

  it("under another sort counts new records in a banner that shows them on request; the session ending ends the live view", async () => {
    const d = await openDashboard();
    const tenant = await signupTenant(d.t);
    await d.call("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { title: "b" } } });
    await openLive(d, tenant, `?sort=${encodeURIComponent('{"title":1}')}`);
    await d.call("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { title: "a" } } });
    await d.seeText("1 new record since this page loaded.");
    expect(await total(d)).toBe("1 record");
    await d.click("button::-p-text(Show the latest)");
    await waitFor(d, () => document.querySelector("[data-testid=record-total]")?.textContent === "2 records");
    expect(await d.page.$("[data-testid=new-records]")).toBeNull();
    // The dashboard's session ends (it expired, or was signed out elsewhere): the page says it is no longer live.
    const cookie = (await d.page.cookies(`${d.url}/_/`)).find((c) => c.name === "tenantd_dashboard")!;
    await d.t.backend.core.db.developers.endSession(hashToken(decodeURIComponent(cookie.value)));
    await waitFor(d, () => document.querySelector("[data-testid=live]")?.textContent === "Not live: reload the page to retry");
    expect(d.errors).toEqual([]);
  });

  it("keeps a collection name from the address inside the records path: a crafted one reaches no other admin route", async () => {
    const d = await openDashboard();
    const tenant = await signupTenant(d.t);
    const asked: string[] = [];
    d.page.on("request", (r) => asked.push(new URL(r.url()).pathname));
    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}/records/..%2F..%2F..%2Forgs`);
    await d.seeText("is not valid");
    expect(asked.some((p) => p.includes(`/records/..%2F..%2F..%2Forgs`))).toBe(true);
    expect(asked.filter((p) => /\/orgs(\/|$)/.test(p))).toEqual([]);
  });
});
