// The developer dashboard driven in a real Chromium against a real tenantd over HTTP.
// One browser and one server for the file; the scenarios run in order and build on each
// other, as a developer would click through them. Screenshots land in test-results/dashboard.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toNodeHandler } from "h3/node";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTenantBackend, type TenantBackend } from "../src/index.ts";
import { attachJsonClientErrors } from "../src/http/node-errors.ts";
import { computeSignature } from "../src/webhooks/sign.ts";
import { TEST_ARGON2, buildRequest, testClock, toReply } from "./_helpers.ts";
import { launchBrowser } from "./_browser.ts";
import { PAGE_WAIT } from "./_dashboard.ts";
import { BOUNDARY, multipart } from "./files-helpers.ts";
import { mailerFor } from "../src/email/mailer.ts";

// A 1×1 PNG, for the file preview.
const PNG_1PX = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const SHOTS = join(process.cwd(), "test-results", "dashboard");
const DESKTOP = { width: 1280, height: 860 };
// Width only: switching isMobile or hasTouch makes puppeteer reload the page.
const PHONE = { width: 390, height: 844 };

interface Delivery {
  raw: Buffer;
  headers: Record<string, string | string[] | undefined>;
  body: { event: string; tenantId: string | null; email: string | null; payload: Record<string, unknown> };
}

let dataDir: string;
let backend: TenantBackend;
let server: Server;
let receiver: Server;
let base: string;
let dash: string;
let hooksUrl: string;
const received: Delivery[] = [];
let browser: Browser;
let closeBrowser: () => Promise<void>;
let page: Page;

const pageErrors: string[] = [];
const state: { appId: string; key: string; target: { id: string; email: string; accessToken: string }; secret: string; cookie: string } = {} as never;

const call = async (method: string, path: string, opts: Parameters<typeof buildRequest>[3] = {}) => toReply(await backend.fetch(buildRequest(base, method, path, opts)));

/** Both widths of the current page, for a person to look at. */
async function shot(name: string) {
  await page.setViewport(PHONE);
  await page.screenshot({ path: join(SHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewport(DESKTOP);
  await page.screenshot({ path: join(SHOTS, `${name}-desktop.png`), fullPage: true });
}

async function seeText(text: string, p: Page = page) {
  try {
    await p.waitForFunction((t) => document.body.innerText.includes(t), { timeout: PAGE_WAIT }, text);
  } catch (e) {
    const body = await p.evaluate(() => document.body.innerText).catch(() => "(no page)");
    throw new Error(`"${text}" did not appear. Page errors: ${pageErrors.join(" | ") || "none"}. Page text: ${body.slice(0, 600)}`, { cause: e });
  }
}
const click = (selector: string, p: Page = page) => p.locator(selector).click();
async function fill(selector: string, value: string, p: Page = page) {
  await p.locator(selector).fill(value);
}
/** Confirms the open dialog, typing the confirmation word first when asked. */
async function confirmDialog(typed?: string) {
  if (typed) await fill("dialog input[name=confirm]", typed);
  await click("dialog button[type=submit]");
  await page.waitForFunction(() => !document.querySelector("dialog[open]"), { timeout: PAGE_WAIT });
}
const go = async (hash: string) => {
  await page.goto(`${dash}#${hash}`);
  await page.waitForFunction(() => !document.querySelector(".loading"), { timeout: PAGE_WAIT });
};

const verifies = (d: Delivery, secret: string) => {
  const sig = String(d.headers["x-service-signature"]);
  const t = Number(d.headers["x-service-timestamp"]);
  return sig === `t=${t},v1=${computeSignature(secret, t, d.raw)}`;
};

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  dataDir = mkdtempSync(join(tmpdir(), "tenantd-dash-"));
  backend = await createTenantBackend({
    dataDir,
    logger: "silent",
    argon2: TEST_ARGON2,
    clock: testClock(),
    rateLimit: false,
    publicUrl: "http://localhost:3000",
    email: { transport: "outbox" },
    webhooks: { allowInsecure: true },
  });
  server = createServer(toNodeHandler(backend));
  attachJsonClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dash = `${base}/_/`;
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      // GET: a page of another site, for the cross-site request test.
      if (req.method !== "POST") return res.writeHead(200, { "content-type": "text/html" }).end("<h1>another site</h1>");
      const raw = Buffer.concat(chunks);
      received.push({ raw, headers: req.headers, body: JSON.parse(raw.toString("utf8")) });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  hooksUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  ({ browser, close: closeBrowser } = await launchBrowser());
  page = await browser.newPage();
  // A script error in the page fails the scenario at hand with its message, not a timeout.
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && pageErrors.push(m.text()));
  await page.setViewport(DESKTOP);
}, 120_000);

afterAll(async () => {
  await closeBrowser?.();
  for (const s of [server, receiver]) {
    if (!s) continue;
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  await backend?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

describe("dashboard in Chromium", { timeout: 60_000 }, () => {
  it("first run names the CLI command that creates a developer, and offers no sign-up", async () => {
    await page.goto(dash);
    await seeText("No developer account exists yet");
    const command = await page.$eval("pre.command", (e) => e.textContent);
    expect(command).toMatch(/^npx tenantd developer create --email you@example\.com --data-dir ".+tenantd-dash-.+"$/);
    expect(await page.$("input[type=password]")).toBeNull();
    await shot("first-run");
  });

  it("signs in with the developer account; the session cookie is HttpOnly and SameSite=Strict", async () => {
    await backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    await backend.admin.createDeveloper({ email: "other@example.com", password: "other password 1" });
    await page.reload();
    await seeText("Sign in to tenantd");
    await shot("sign-in");
    await fill("input[name=email]", "dev@example.com");
    await fill("input[name=password]", "wrong password");
    await click("button[type=submit]");
    await seeText("Wrong email or password.");
    await fill("input[name=password]", "developer password");
    await click("button[type=submit]");
    await seeText("dev@example.com");
    await seeText("Create an app");
    const cookie = (await page.cookies()).find((c) => c.name === "tenantd_dashboard")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Strict", path: "/_/" });
    expect(await page.evaluate(() => document.cookie)).toBe("");
    state.cookie = `${cookie.name}=${cookie.value}`;
  });

  it("creates an app and shows its keys", async () => {
    await fill("input[name=name]", "Shop");
    expect(await page.$eval("input[name=name]", (e) => (e as HTMLInputElement).value)).toBe("Shop");
    await click("button::-p-text(Create app)");
    // The new app's overview opens: its id is in the address.
    await page.waitForFunction(() => /^#\/apps\/[^/?]+/.test(location.hash), { timeout: PAGE_WAIT });
    await seeText("Publishable key");
    const app = await backend.admin.getApp(decodeURIComponent((await page.evaluate(() => location.hash)).split(/[/?]/)[2]!));
    expect(app.name).toBe("Shop");
    state.appId = app.id;
    state.key = app.publishableKey;
    // The heading can render a moment before the key itself on a loaded machine.
    await page.waitForSelector("[data-testid=publishable-key]");
    expect(await page.$eval("[data-testid=publishable-key]", (e) => e.textContent)).toBe(app.publishableKey);
    await shot("app-overview");
    await go("/apps");
    await seeText("Shop");
    await shot("apps");
  });

  it("sets a unique and an indexed field on a collection", async () => {
    await go(`/apps/${state.appId}/settings`);
    await fill("input[name=newCollection]", "notes");
    await click("button::-p-text(Add collection)");
    await fill("input[name='unique.notes']", "slug");
    await fill("input[name='indexed.notes']", "priority");
    await click("button::-p-text(Save collections)");
    await seeText("Saved");
    expect((await backend.admin.getApp(state.appId)).settings.collections).toEqual({ notes: { unique: ["slug"], indexed: ["priority"] } });
    await shot("settings");
  });

  it("finds one tenant by email among 500 and opens it", async () => {
    const signup = async (email: string) => {
      const res = await call("POST", "/api/v1/auth/signup", { key: state.key, body: { email, password: "correct horse battery" } });
      expect(res.status, res.text).toBe(201);
      return res.body;
    };
    for (let i = 0; i < 499; i += 50) await Promise.all(Array.from({ length: Math.min(50, 499 - i) }, (_, j) => signup(`person${i + j}@example.com`)));
    const target = await signup("zoe.target@example.org");
    state.target = { id: target.tenant.id, email: target.tenant.email, accessToken: target.accessToken };
    // Records for the records browser (the unique field holds within this tenant's collection).
    const bearer = { accessToken: target.accessToken, appId: state.appId };
    for (let n = 1; n <= 8; n++) {
      const res = await call("POST", "/api/v1/data/notes", { bearer, body: { data: { slug: `note-${n}`, priority: n, title: `Note ${n}` } } });
      expect(res.status, res.text).toBe(201);
    }
    expect((await call("POST", "/api/v1/data/notes", { bearer, body: { data: { slug: "note-1" } } })).status).toBe(409);
    const upload = await call("POST", "/api/v1/files/upload", {
      bearer,
      raw: multipart([{ filename: "dot.png", type: "image/png", data: PNG_1PX }]),
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
    expect(upload.status, upload.text).toBe(201);

    await go(`/apps/${state.appId}/tenants`);
    await seeText("Page 1 of 20 (500 in all)");
    await shot("tenants");
    await fill("input[name=email]", "zoe.target");
    await click("form[role=search] button[type=submit]");
    await page.waitForFunction(() => document.querySelectorAll("tbody tr").length === 1, { timeout: PAGE_WAIT });
    await click("a::-p-text(zoe.target@example.org)");
    await seeText("Subscription and entitlements");
    expect(await page.$eval("h1", (e) => e.textContent)).toBe("zoe.target@example.org");
    expect(await page.$eval("[data-testid=verified]", (e) => e.textContent)).toBe("Not verified");
  });

  it("creates a plan with typed entitlements", async () => {
    await go(`/apps/${state.appId}/plans`);
    await seeText("No plans yet");
    await fill("input[name=name]", "Pro");
    await fill("input[name=slug]", "pro");
    await fill("input[name=price]", "9.50");
    await click("button::-p-text(Add entitlement)");
    await fill("input[name=new-key-0]", "pro");
    await click("button::-p-text(Add entitlement)");
    await fill("input[name=new-key-1]", "projects");
    await page.select("select[name=new-type-1]", "number");
    await fill("input[name=new-value-1]", "10");
    await click("button::-p-text(Create plan)");
    await seeText("9.50 USD / month");
    const plans = (await call("GET", `/api/v1/admin/apps/${state.appId}/plans`, { headers: { cookie: "" }, developer: await devToken() })).body.plans;
    expect(plans).toMatchObject([{ name: "Pro", slug: "pro", priceCents: 950, entitlements: { pro: true, projects: 10 } }]);
    await shot("plans");
  });

  it("gifts the plan and the tenant's entitlements change", async () => {
    await go(`/apps/${state.appId}/tenants/${state.target.id}`);
    await seeText("No subscription: the app's default entitlements apply.");
    expect(await page.$eval("[data-testid=entitlements]", (e) => e.textContent)).toContain("No entitlements");
    await click("button::-p-text(Gift plan)");
    await seeText("from gift");
    const ents = await page.$eval("[data-testid=entitlements]", (e) => (e as HTMLElement).innerText);
    expect(ents.replace(/\s+/g, " ").trim()).toBe("pro true projects 10");
    const me = await call("GET", "/api/v1/billing/entitlements", { bearer: { accessToken: state.target.accessToken, appId: state.appId } });
    expect(me.body).toMatchObject({ entitlements: { pro: true, projects: 10 } });
    // The image preview loads through the dashboard under its CSP.
    await page.waitForFunction(() => (document.querySelector(".files img") as HTMLImageElement | null)?.naturalWidth === 1, { timeout: PAGE_WAIT });
    await shot("tenant");
  });

  it("browses the tenant's records with a filter", async () => {
    await click("a::-p-text(notes)");
    await seeText("Records in notes");
    await seeText("8 records");
    await fill("input[name=filter]", '{"priority": {"$gte": 6}}');
    await fill("input[name=sort]", '{"priority": 1}');
    await click("button::-p-text(Apply)");
    await seeText("3 records");
    const slugs = await page.$$eval("pre.json", (els) => els.map((e) => JSON.parse(e.textContent!).slug));
    expect(slugs).toEqual(["note-6", "note-7", "note-8"]);
    await shot("records");
    await fill("input[name=filter]", '{"priority": {"$bogus": 1}}');
    await click("button::-p-text(Apply)");
    await page.waitForSelector(".error");
    expect(await page.$eval(".error", (e) => e.textContent)).toContain("$bogus");
  });

  it("sets the webhook URL and shows the secret once", async () => {
    await go(`/apps/${state.appId}/webhooks`);
    await seeText("No deliveries yet");
    await fill("input[name=url]", hooksUrl);
    await click("button::-p-text(Save URL)");
    await seeText("Webhook signing secret");
    state.secret = (await page.$eval(".secret-value", (e) => e.textContent))!;
    expect(state.secret.length).toBeGreaterThan(20);
    await shot("webhooks");
    await page.reload();
    await seeText("Secret created");
    expect(await page.$(".secret-value")).toBeNull();
  });

  it("resends verification in both modes: tenantd sends it, or the webhook fires", async () => {
    await go(`/apps/${state.appId}/tenants/${state.target.id}`);
    await click("button::-p-text(Resend verification)");
    await seeText("Verification email sent by tenantd.");
    await mailerFor(backend.core).idle();
    await go(`/apps/${state.appId}/outbox`);
    await seeText("zoe.target@example.org");
    await shot("outbox");

    await go(`/apps/${state.appId}/settings`);
    // The form is filled from the app once it has loaded; a click before that would be undone.
    await seeText("Sign-up mode");
    await page.waitForFunction(() => (document.querySelector("input[name=sendEmail]") as HTMLInputElement | null)?.checked === true);
    await click("input[name=sendEmail]");
    await page.waitForFunction(() => (document.querySelector("input[name=sendEmail]") as HTMLInputElement | null)?.checked === false);
    await click("button::-p-text(Save email)");
    await seeText("Saved");
    expect((await backend.admin.getApp(state.appId)).settings.email).toMatchObject({ sendEmail: false });
    await go(`/apps/${state.appId}/tenants/${state.target.id}`);
    await click("button::-p-text(Resend verification)");
    await seeText("Verification webhook fired");
    const hook = await vi.waitFor(() => {
      const d = received.find((r) => r.body.event === "tenant.email.resend_verification");
      if (!d) throw new Error("no delivery yet");
      return d;
    });
    expect(hook.body).toMatchObject({ tenantId: state.target.id, email: "zoe.target@example.org" });
    expect(verifies(hook, state.secret)).toBe(true);
  });

  it("deletes the tenant with a typed confirmation: one admin_delete delivery, in the log too", async () => {
    await click("button::-p-text(Delete tenant…)");
    await page.waitForSelector("dialog[open]");
    expect(await page.$eval("dialog button[type=submit]", (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await confirmDialog("zoe.target@example.org");
    await seeText("Page 1 of 20 (499 in all)");
    const deleted = await vi.waitFor(() => {
      const d = received.filter((r) => r.body.event === "tenant.deleted");
      if (d.length === 0) throw new Error("no delivery yet");
      return d;
    });
    expect(deleted).toHaveLength(1);
    expect(deleted[0]!.body).toMatchObject({ tenantId: state.target.id, email: "zoe.target@example.org", payload: { reason: "admin_delete" } });
    await go(`/apps/${state.appId}/webhooks`);
    await page.select("select[name=status]", "delivered");
    await page.waitForFunction(() => document.querySelectorAll("[data-testid=deliveries] tbody tr").length >= 2, { timeout: PAGE_WAIT });
    const events = await page.$$eval("[data-testid=deliveries] tbody tr td:first-child code", (els) => els.map((e) => e.textContent));
    expect(events.filter((e) => e === "tenant.deleted")).toHaveLength(1);
    // Open that delivery: the body shown is the one the receiver got, formatted for reading.
    const detailButtons = await page.$$("[data-testid=deliveries] tbody tr button");
    await detailButtons[events.indexOf("tenant.deleted")]!.click();
    await seeText("Delivery id");
    const shown = await page.waitForSelector("[data-testid=delivery-body]", { timeout: PAGE_WAIT });
    const text = await shown!.evaluate((el) => el.textContent ?? "");
    expect(text).toBe(JSON.stringify(JSON.parse(deleted[0]!.raw.toString("utf8")), null, 2));
    expect(await page.evaluate(() => document.body.innerText)).not.toContain("Not stored");
    await seeText("Copy raw body");
    await shot("webhook-log");
  });

  it("rotates the webhook secret: the next delivery verifies only with the new one", async () => {
    await click("button::-p-text(Rotate secret…)");
    await confirmDialog();
    await seeText("the old secret stopped signing at once");
    const fresh = (await page.$eval(".secret-value", (e) => e.textContent))!;
    expect(fresh).not.toBe(state.secret);
    const before = received.length;
    await click("button::-p-text(Send test event)");
    await seeText("Test event queued");
    const test = await vi.waitFor(() => {
      const d = received.slice(before).find((r) => r.body.event === "webhook.test");
      if (!d) throw new Error("no test delivery yet");
      return d;
    });
    expect(verifies(test, fresh)).toBe(true);
    expect(verifies(test, state.secret)).toBe(false);
  });

  it("shows the developer's usage", async () => {
    await go("/usage");
    await seeText("Webhook deliveries this month");
    await shot("usage");
  });

  it("refuses a cross-site POST without the CSRF proof, and a same-site one without the token", async () => {
    const crossSite = await call("POST", "/_/api/admin/apps", { body: { name: "Evil" }, headers: { cookie: state.cookie, origin: "http://evil.example" } });
    expect(crossSite.status).toBe(403);
    expect(crossSite.body.message).toMatch(/Cross-site request refused/);
    const noToken = await call("POST", "/_/api/admin/apps", { body: { name: "Evil" }, headers: { cookie: state.cookie, origin: base } });
    expect(noToken.status).toBe(403);
    expect(noToken.body.message).toMatch(/x-dashboard-csrf/);
    // A page on another site posting with the browser's own cookies: refused, nothing created.
    const evil = await browser.newPage();
    await evil.goto(`${hooksUrl.replace("127.0.0.1", "localhost")}/evil`);
    const status = await evil.evaluate(async (url) => {
      const res = await fetch(url, { method: "POST", credentials: "include", headers: { "content-type": "text/plain" }, body: '{"name":"Evil"}' }).catch(() => null);
      return res ? res.status : "blocked";
    }, `${dash}api/admin/apps`);
    await evil.close();
    expect(status).not.toBe(201);
    expect((await backend.admin.listApps()).map((a) => a.name)).not.toContain("Evil");
  });

  it("a second developer sees none of the first one's apps", async () => {
    const context = await browser.createBrowserContext();
    const other = await context.newPage();
    await other.setViewport(DESKTOP);
    await other.goto(dash);
    await fill("input[name=email]", "other@example.com", other);
    await fill("input[name=password]", "other password 1", other);
    await click("button[type=submit]", other);
    await seeText("other@example.com", other);
    await seeText("You have no apps yet", other);
    expect(await other.evaluate(() => document.body.innerText)).not.toContain("Shop");
    await other.goto(`${dash}#/apps/${state.appId}/tenants`);
    await seeText(`No app ${state.appId} among your apps.`, other);
    await context.close();
  });

  it("deletes an app only after its name is typed", async () => {
    await go(`/apps/${state.appId}`);
    await click("button::-p-text(Delete app…)");
    await page.waitForSelector("dialog[open]");
    await fill("dialog input[name=confirm]", "Shop?");
    expect(await page.$eval("dialog button[type=submit]", (b) => (b as HTMLButtonElement).disabled)).toBe(true);
    await confirmDialog("Shop");
    await seeText("Create an app");
    expect((await backend.admin.listApps()).map((a) => a.name)).not.toContain("Shop");
  });

  it("signs out, and the old session cookie no longer works", async () => {
    await go("/apps");
    expect((await call("GET", "/_/api/admin/apps", { headers: { cookie: state.cookie } })).status).toBe(200);
    await click("button::-p-text(Sign out)");
    await seeText("Sign in to tenantd");
    const after = await call("GET", "/_/api/admin/apps", { headers: { cookie: state.cookie } });
    expect(after.status).toBe(401);
    expect(after.body.error).toBe("unauthorized");
  });
});

/** A bearer developer session for checks made beside the browser. */
async function devToken(): Promise<string> {
  const res = await call("POST", "/api/v1/developer/login", { body: { email: "dev@example.com", password: "developer password" } });
  return res.body.token;
}
