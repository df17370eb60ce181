// Passkeys in a real Chromium with its virtual authenticator (CDP WebAuthn domain): the
// tenantd/client bundle on a small page registers a passkey with navigator.credentials and
// signs in with it as a discoverable credential, against a real tenantd over HTTP.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { build } from "esbuild";
import { toNodeHandler } from "h3/node";
import { describe, expect, it } from "vitest";
import { afterThisTest, startBackend } from "./_helpers.ts";
import { launchBrowser } from "./_browser.ts";
import { PASSWORD } from "./_auth.ts";

const PAGE = `<!doctype html><html><body><p>passkey test page</p><script type="module" src="/client.js"></script></body></html>`;

async function clientBundle(): Promise<string> {
  const result = await build({
    entryPoints: [join(process.cwd(), "src/client/index.ts")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    logLevel: "silent",
    // The page's script reads the exports from window.
    footer: { js: "window.tenantd = { createClient, memoryStorage };" },
  });
  return result.outputFiles[0]!.text;
}

describe("passkeys in Chromium", () => {
  it("registers a passkey on the virtual authenticator and signs in with it, no email typed", { timeout: 120_000 }, async () => {
    const t = await startBackend();
    const script = await clientBundle();
    const api = toNodeHandler(t.backend);
    // One origin for the page and the API, on localhost: a secure context whose host is a valid RP id.
    const server = createServer((req, res) => {
      if (req.url === "/") return void res.setHeader("content-type", "text/html").end(PAGE);
      if (req.url === "/client.js") return void res.setHeader("content-type", "text/javascript").end(script);
      return void api(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    afterThisTest(() => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))));
    const origin = `http://localhost:${(server.address() as AddressInfo).port}`;
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: [origin] } });

    const { browser, close } = await launchBrowser();
    afterThisTest(close);
    const page = await browser.newPage();
    const cdp = await page.createCDPSession();
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
    });
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => "tenantd" in window);

    const config = { url: origin, appId: t.app.id, key: t.app.publishableKey, password: PASSWORD };
    const registered = await page.evaluate(async (c) => {
      const { createClient, memoryStorage } = (window as any).tenantd;
      const client = createClient({ url: c.url, appId: c.appId, key: c.key, storage: memoryStorage(), locks: false });
      await client.auth.signUp({ email: "browser@example.com", password: c.password });
      const passkey = await client.auth.registerPasskey({ name: "Chromium" });
      return { passkey, list: await client.auth.listPasskeys() };
    }, config);
    expect(registered.passkey).toMatchObject({ name: "Chromium", lastUsedAt: null });
    expect(registered.list).toHaveLength(1);

    // The authenticator holds one resident (discoverable) credential for the RP "localhost".
    const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    expect(credentials).toHaveLength(1);
    expect(credentials[0]).toMatchObject({ isResidentCredential: true, rpId: "localhost" });

    // A fresh client (another storage: signed out) signs in with the passkey alone.
    const signedIn = await page.evaluate(async (c) => {
      const { createClient, memoryStorage } = (window as any).tenantd;
      const client = createClient({ url: c.url, appId: c.appId, key: c.key, storage: memoryStorage(), locks: false });
      const tenant = await client.auth.signInWithPasskey();
      const me = await client.auth.me();
      return { tenant, me, passkeys: await client.auth.listPasskeys() };
    }, config);
    expect(signedIn.tenant.email).toBe("browser@example.com");
    expect(signedIn.me.email).toBe("browser@example.com");
    expect(signedIn.passkeys[0].lastUsedAt).not.toBeNull();
    // The counter the authenticator keeps moved forward with the server's.
    const after = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
    const stored = await t.backend.core.db.mfa.passkeys(t.app.id, signedIn.tenant.id);
    expect(stored[0]!.counter).toBe(after.credentials[0]!.signCount);
  });
});
