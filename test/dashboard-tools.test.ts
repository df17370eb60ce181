// Issue 45's new dashboard tools in real Chromium against a real tenantd: the records
// editor, tenant actions, sending a webhook event again, email previews and a test send,
// the API reference served locally, and the Logs page.
import { describe, expect, it, vi } from "vitest";
import { mailerFor } from "../src/email/mailer.ts";
import { openDashboard, PAGE_WAIT, type Dashboard } from "./_dashboard.ts";
import { signupTenant } from "./_helpers.ts";
import { startReceiver } from "./_webhook-receiver.ts";

const records = async (d: Dashboard, tenantId: string, collection: string) =>
  (await d.call("GET", `/api/v1/admin/apps/${d.t.app.id}/tenants/${tenantId}/records/${collection}?limit=100`, { developer: d.devToken })).body.records as { id: string; data: Record<string, unknown> }[];

describe("dashboard tools (issue 45)", { timeout: 90_000 }, () => {
  it("records editor: create, edit, delete, and a bulk delete of a filtered selection after typing its size", async () => {
    const d = await openDashboard();
    const owner = await signupTenant(d.t);
    for (let n = 1; n <= 5; n++) await d.call("POST", "/api/v1/data/notes", { bearer: owner.bearer, body: { data: { n, keep: n <= 2 } } });
    await d.go(`/apps/${d.t.app.id}/tenants/${owner.id}/records/notes`);
    await d.seeText("5 records");

    await d.click("button::-p-text(New record…)");
    await d.fill("textarea[name=data]", "{ not json");
    await d.click("button::-p-text(Create record)");
    await d.seeText("Not valid JSON");
    expect(await d.focused()).toMatchObject({ name: "data", invalid: "true" });
    await d.fill("textarea[name=data]", "[1, 2]");
    await d.click("button::-p-text(Create record)");
    await d.seeText("A record's data is a JSON object");
    await d.fill("textarea[name=data]", '{"n": 6, "title": "from the dashboard", "tags": ["a"]}');
    await d.click("button::-p-text(Create record)");
    await d.seeText("6 records");
    const created = (await records(d, owner.id, "notes")).find((r) => r.data.n === 6)!;
    expect(created.data).toEqual({ n: 6, title: "from the dashboard", tags: ["a"] });

    // Edit: a key removed and one changed, as the box shows them.
    await d.click(`button[aria-label='Edit ${created.id}']`);
    await d.fill(`form[aria-label='Data of ${created.id}'] textarea`, '{"n": 7, "tags": ["a"]}');
    await d.click("button::-p-text(Save record)");
    await d.seeText(`Record ${created.id} saved.`);
    expect((await records(d, owner.id, "notes")).find((r) => r.id === created.id)!.data).toEqual({ n: 7, tags: ["a"] });

    await d.click(`button[aria-label='Delete ${created.id}']`);
    await d.page.waitForSelector("dialog[open]");
    await d.click("dialog button[type=submit]");
    await d.seeText(`Record ${created.id} deleted.`);
    await d.seeText("5 records");

    // Bulk: only the filtered selection, and only once its size is typed.
    await d.fill("input[name=filter]", '{"keep": false}');
    await d.click("button::-p-text(Apply)");
    await d.seeText("3 records");
    await d.click("button::-p-text(Delete all matching (3)…)");
    await d.page.waitForSelector("dialog[open]");
    await d.fill("dialog input[name=confirm]", "2");
    expect(await d.page.$eval("dialog button[type=submit]", (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await d.fill("dialog input[name=confirm]", "3");
    await d.click("dialog button[type=submit]");
    await d.seeText("3 records deleted.");
    expect((await records(d, owner.id, "notes")).map((r) => r.data.n).sort()).toEqual([1, 2]);
  });

  it("tenant actions: create a tenant (verified or not) and mark an address verified", async () => {
    const d = await openDashboard();
    await d.t.backend.admin.updateApp(d.t.app.id, { settings: { signupMode: "closed" } });
    await d.go(`/apps/${d.t.app.id}/tenants`);
    await d.click("button::-p-text(Create a tenant…)");
    await d.fill("form[aria-label='Create a tenant'] input[name=email]", "made.by.dev@example.com");
    await d.fill("form[aria-label='Create a tenant'] input[name=password]", "a long password here");
    await d.click("button::-p-text(Create tenant)");
    await d.page.waitForFunction(() => document.querySelector("h1")?.textContent === "made.by.dev@example.com");
    expect(await d.page.$eval("[data-testid=verified]", (e) => e.textContent)).toBe("Not verified");
    // They sign in with that password, though sign-up is closed.
    const login = await d.call("POST", "/api/v1/auth/login", { key: d.t.app.publishableKey, body: { email: "made.by.dev@example.com", password: "a long password here" } });
    expect(login.status, login.text).toBe(200);

    await d.click("button::-p-text(Mark verified)");
    await d.seeText("Email marked verified.");
    await d.page.waitForFunction(() => document.querySelector("[data-testid=verified]")?.textContent !== "Not verified");
    expect(await d.page.$("button::-p-text(Resend verification)")).toBeNull();

    await d.go(`/apps/${d.t.app.id}/tenants`);
    await d.click("button::-p-text(Create a tenant…)");
    await d.fill("form[aria-label='Create a tenant'] input[name=email]", "made.by.dev@example.com");
    await d.click("button::-p-text(Create tenant)");
    await d.seeText("already exists");
    expect(await d.focused()).toMatchObject({ name: "email", invalid: "true" });
  });

  it("tenant actions: turning sign-in off ends the sessions and refuses sign-in with a clear message, until it is back on", async () => {
    const d = await openDashboard();
    const tenant = await signupTenant(d.t, { password: "correct horse battery" });
    const login = () => d.call("POST", "/api/v1/auth/login", { key: d.t.app.publishableKey, body: { email: tenant.email, password: "correct horse battery" } });
    await d.go(`/apps/${d.t.app.id}/tenants/${tenant.id}`);
    await d.click("button::-p-text(Turn sign-in off…)");
    await d.page.waitForSelector("dialog[open]");
    await d.click("dialog button[type=submit]");
    await d.seeText("Sign-in turned off: 1 session ended.");
    await d.seeText("Turned off");
    expect((await d.call("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).status).toBe(401);
    const refused = await login();
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ error: "forbidden", message: expect.stringMatching(/Sign-in is turned off for this account/) });
    // A wrong password still says only that: nothing about the account's state.
    const wrong = await d.call("POST", "/api/v1/auth/login", { key: d.t.app.publishableKey, body: { email: tenant.email, password: "not the password" } });
    expect(wrong.body.error).toBe("invalid_credentials");

    await d.click("button::-p-text(Turn sign-in back on)");
    await d.seeText("Sign-in turned back on.");
    expect((await login()).status).toBe(200);
  });

  it("webhooks: a delivery is sent again from its details, and statuses carry a word and a colour", async () => {
    const d = await openDashboard();
    const receiver = await startReceiver();
    await d.t.backend.admin.setWebhookUrl(d.t.app.id, receiver.url);
    await d.call("POST", `/api/v1/admin/apps/${d.t.app.id}/event-webhook-config/test`, { developer: d.devToken });
    await vi.waitFor(() => expect(receiver.received).toHaveLength(1));
    await d.go(`/apps/${d.t.app.id}/webhooks`);
    await d.page.waitForSelector("[data-testid=deliveries] .status-delivered");
    expect(await d.page.$eval("[data-testid=deliveries] .status-delivered", (e) => e.textContent)).toBe("Delivered");
    await d.click("[data-testid=deliveries] tbody tr button");
    await d.click("button::-p-text(Send again)");
    await d.seeText("Queued again");
    await vi.waitFor(() => expect(receiver.received).toHaveLength(2));
    const [first, again] = receiver.received.map((r) => JSON.parse(r.raw.toString()));
    expect(again).toMatchObject({ event: "webhook.test", payload: first.payload });
    await d.page.waitForFunction(() => document.querySelectorAll("[data-testid=deliveries] tbody tr:not(.details)").length === 2, { timeout: PAGE_WAIT });
    // Filtered by event on the server, the filter kept in the URL.
    await d.page.select("select[name=event]", "tenant.deleted");
    await d.seeText("No deliveries match these filters");
    expect(await d.page.evaluate(() => location.hash)).toContain("event=tenant.deleted");
    await d.page.select("select[name=event]", "webhook.test");
    await d.page.waitForFunction(() => document.querySelectorAll("[data-testid=deliveries] tbody tr:not(.details)").length === 2, { timeout: PAGE_WAIT });
  });

  it("email: every template in en, es and nl with the app's name and links, and a test send", async () => {
    const d = await openDashboard();
    await d.t.backend.admin.updateApp(d.t.app.id, { settings: { email: { appName: "Acme Notes", verifyUrl: "https://acme.example/verify?t={token}" } } });
    await d.go(`/apps/${d.t.app.id}/email`);
    await d.seeText("Templates");
    expect(await d.page.$$eval("select[name=template] option", (os) => os.length)).toBe(6);
    await d.page.select("select[name=template]", "verify-es");
    await d.page.waitForFunction(() => document.querySelector("pre.email-text")?.getAttribute("lang") === "es");
    const preview = await d.page.$eval("[data-testid=email-preview]", (e) => (e as HTMLElement).innerText);
    expect(preview).toContain("Acme Notes");
    expect(preview).toContain("https://acme.example/verify?t=PREVIEW-TOKEN");

    await d.fill("input[name=to]", "me@example.com");
    await d.click("button::-p-text(Send test email)");
    await d.seeText("Test email written to the development outbox for me@example.com.");
    await mailerFor(d.t.backend.core).idle();
    const outbox = (await d.call("GET", `/api/v1/admin/apps/${d.t.app.id}/outbox`, { developer: d.devToken })).body.messages;
    expect(outbox).toMatchObject([{ to: "me@example.com", subject: expect.stringMatching(/^\[test\] .*Acme Notes/) }]);
  });

  it("API docs: the server's OpenAPI document rendered from this server, searchable", async () => {
    const d = await openDashboard();
    const hosts = new Set<string>();
    d.page.on("request", (r) => hosts.add(new URL(r.url()).origin));
    await d.go("/api");
    await d.seeText("operations");
    await d.fill("input[name=q]", "bulk-delete");
    await d.page.waitForFunction(() => document.querySelectorAll("ul.ops li").length === 1);
    expect(await d.page.$eval("ul.ops li summary", (e) => e.textContent)).toMatch(/POST.*records\/:collection\/bulk-delete|POST.*records\/\{collection\}\/bulk-delete/);
    expect([...hosts]).toEqual([d.url]);
  });

  it("backups: the commands that make and restore one, shown to every developer", async () => {
    const d = await openDashboard();
    await d.go("/backups");
    expect(await d.page.$eval("[data-testid=backup-command]", (e) => e.textContent)).toMatch(/^npx tenantd backup /);
    expect(await d.page.$eval("[data-testid=restore-command]", (e) => e.textContent)).toMatch(/^npx tenantd restore /);
    expect(await d.page.title()).toBe("Backups · tenantd");
  });

  it("logs: the app's recent requests, and an audit tab that says when the server has no audit trail", async () => {
    const d = await openDashboard();
    await signupTenant(d.t);
    await d.call("POST", "/api/v1/auth/login", { key: d.t.app.publishableKey, body: { email: "nobody@example.com", password: "wrong password" } });
    await d.go(`/apps/${d.t.app.id}/logs`);
    await d.page.waitForSelector("[data-testid=access-log]");
    const log = await d.page.$eval("[data-testid=access-log]", (e) => (e as HTMLElement).innerText);
    expect(log).toContain("POST /api/v1/auth/signup");
    expect(log).toContain("POST /api/v1/auth/login");
    await d.page.select("select[name=status]", "4");
    await d.page.waitForFunction(() => {
      const text = document.querySelector("[data-testid=access-log]")?.textContent ?? "";
      return text.includes("401") && !text.includes("signup");
    });
    await d.click("a[role=tab]::-p-text(Audit trail)");
    await d.page.waitForSelector("[data-testid=audit-unavailable], [data-testid=audit]");
    expect(await d.page.evaluate(() => location.hash)).toContain("tab=audit");
  });
});
