import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser } from "puppeteer-core";

const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-dev-shm-usage",
];

/**
 * The Chromium the dashboard tests drive: the system one when installed (faster to start),
 * else the one shipped inside the `@sparticuz/chromium` npm package, so `npm ci && npm test`
 * needs nothing but the npm registry.
 */
async function chromiumPath(): Promise<string> {
  const system = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].find((p) => existsSync(p));
  if (system) return system;
  try {
    const { default: chromium } = await import("@sparticuz/chromium");
    return await chromium.executablePath();
  } catch (e) {
    throw new Error(
      `No Chromium for the dashboard tests: /usr/bin/chromium is not installed and @sparticuz/chromium could not unpack its browser (${(e as Error).message}). Run npm ci, or install chromium.`,
    );
  }
}

/** Launches headless Chromium with a fresh profile; `close()` also removes the profile. */
export async function launchBrowser(): Promise<{ browser: Browser; close(): Promise<void> }> {
  const executablePath = await chromiumPath();
  const profile = mkdtempSync(join(tmpdir(), "tenantd-chromium-"));
  let browser: Browser;
  try {
    browser = await puppeteer.launch({ executablePath, headless: true, args: [...FLAGS, `--user-data-dir=${profile}`], protocolTimeout: 60_000 });
  } catch (e) {
    rmSync(profile, { recursive: true, force: true });
    throw new Error(`Chromium at ${executablePath} did not start: ${(e as Error).message}`);
  }
  return {
    browser,
    async close() {
      await browser.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
