// A signed-in dashboard in real Chromium, one fresh backend and browser context per test:
// the scenarios of the dashboard files that need not build on each other use it.
import type { Browser, Page } from "puppeteer-core";
import { afterAll, expect } from "vitest";
import type { TenantBackendConfig } from "../src/index.ts";
import { launchBrowser } from "./_browser.ts";
import { afterThisTest, serveHttp, startBackend, toReply, buildRequest, type ReqOptions, type TestBackend } from "./_helpers.ts";

export const DESKTOP = { width: 1440, height: 900 };
export const PHONE = { width: 390, height: 844 };
export const DEV = { email: "dev@example.com", password: "developer password" };
/**
 * How long a page may take to show what a step waits for. CI runs both projects' browser
 * files beside the tarball install and the robustness sweep on 2 cores, where a page that
 * answers in 300 ms alone has taken over 10 s.
 */
export const PAGE_WAIT = 25_000;

let launched: Promise<{ browser: Browser; close(): Promise<void> }> | undefined;
afterAll(async () => {
  const b = await launched;
  launched = undefined;
  await b?.close();
});

/** Helpers bound to one page: what a person does and sees. */
export function pageHelpers(page: Page, errors: string[]) {
  const seeText = async (text: string) => {
    try {
      await page.waitForFunction((t) => document.body.innerText.includes(t), { timeout: PAGE_WAIT }, text);
    } catch (e) {
      const body = await page.evaluate(() => document.body.innerText).catch(() => "(no page)");
      throw new Error(`"${text}" did not appear. Page errors: ${errors.join(" | ") || "none"}. Page text: ${body.slice(0, 800)}`, { cause: e });
    }
  };
  return {
    seeText,
    click: (selector: string) => page.locator(selector).click(),
    fill: (selector: string, value: string) => page.locator(selector).fill(value),
    /** The focused element, described: tag, name, text and accessible attributes. */
    focused: () =>
      page.evaluate(() => {
        const e = document.activeElement as HTMLElement | null;
        return e ? { tag: e.tagName.toLowerCase(), name: e.getAttribute("name"), text: e.textContent?.trim() ?? "", invalid: e.getAttribute("aria-invalid"), describedBy: e.getAttribute("aria-describedby") } : null;
      }),
    /** The page's text with runs of white space as one space. */
    text: () => page.evaluate(() => document.body.innerText.replace(/\s+/g, " ")),
  };
}

export interface Dashboard extends ReturnType<typeof pageHelpers> {
  t: TestBackend;
  page: Page;
  url: string;
  errors: string[];
  /** A developer bearer token, for checks made beside the browser. */
  devToken: string;
  /** Opens `#<hash>` and waits until nothing is loading. */
  go(hash: string): Promise<void>;
  /** A request to the server over HTTP, beside the browser. */
  call(method: string, path: string, opts?: ReqOptions): Promise<Awaited<ReturnType<typeof toReply>>>;
}

/**
 * A backend served over HTTP, its first developer (who owns the default app `t.app`) signed
 * in to the dashboard in a fresh browser context. Closed after the test.
 */
export async function openDashboard(config: TenantBackendConfig = {}, viewport = DESKTOP): Promise<Dashboard> {
  const t = await startBackend({ webhooks: { allowInsecure: true }, ...config });
  const { url } = await serveHttp(t.backend);
  await t.backend.admin.createDeveloper(DEV);
  const call = async (method: string, path: string, opts: ReqOptions = {}) => toReply(await fetch(buildRequest(url, method, path, opts)));
  const signIn = await call("POST", "/_/session", { body: DEV, headers: { origin: url } });
  expect(signIn.status, signIn.text).toBe(200);
  const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
  const devToken = (await call("POST", "/api/v1/developer/login", { body: DEV })).body.token as string;

  launched ??= launchBrowser();
  const { browser } = await launched;
  const context = await browser.createBrowserContext();
  afterThisTest(() => context.close());
  const page = await context.newPage();
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
  await page.setViewport(viewport);
  const [name, ...value] = cookie.split("=");
  await page.setCookie({ name: name!, value: value.join("="), url: `${url}/_/` });
  const helpers = pageHelpers(page, errors);
  return {
    ...helpers,
    t,
    page,
    url,
    errors,
    devToken,
    call,
    async go(hash: string) {
      await page.goto(`${url}/_/#${hash}`);
      await page.waitForFunction(() => !document.querySelector(".loading"), { timeout: PAGE_WAIT });
    },
  };
}
