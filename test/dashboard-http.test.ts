// The dashboard's server side over HTTP, without a browser: what it serves, its headers,
// the cookie session, CSRF refusals, rate limits, the off switch, its path and mount().
import { gzipSync } from "node:zlib";
import { H3 } from "h3";
import { describe, expect, it } from "vitest";
import { CSP } from "../src/dashboard/security.ts";
import { startBackend, type TestBackend } from "./_helpers.ts";

const ORIGIN = "http://localhost";
/** The page's one script, relative to the dashboard's path. */
const scriptOf = (html: string) => /<script type="module" src="([^"]+)"/.exec(html)![1]!;

async function signIn(t: TestBackend, email = "dev@example.com", password = "developer password", prefix = "/_") {
  const res = await t.request("POST", `${prefix}/session`, { body: { email, password }, headers: { origin: ORIGIN } });
  expect(res.status, res.text).toBe(200);
  const cookie = res.headers.get("set-cookie")!;
  return { cookie: cookie.split(";")[0]!, setCookie: cookie, csrf: res.body.csrfToken as string };
}

describe("dashboard over HTTP", () => {
  it("serves the page and its assets with a strict CSP, gzip, and under 150 KB compressed in all", async () => {
    const t = await startBackend();
    const page = await t.request("GET", "/_/");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toBe(CSP);
    expect(CSP).toContain("frame-ancestors 'none'");
    expect(CSP).not.toContain("unsafe-inline");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.text).not.toMatch(/<script>|<style|style=|\son[a-z]+=/i);

    const redirect = await t.request("GET", "/_");
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get("location")).toBe("/_/");

    // The first load needs one script and one stylesheet, bundled and named by content hash:
    // a browser keeps them for a year, and a new release has new names.
    const refs = [...page.text.matchAll(/(?:src|href)="(assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(refs).toEqual([expect.stringMatching(/^assets\/style-[A-Z0-9]{8}\.css$/), expect.stringMatching(/^assets\/app-[A-Z0-9]{8}\.js$/)]);
    let compressed = gzipSync(page.text).length;
    for (const ref of refs) {
      const res = await t.backend.fetch(new Request(`${ORIGIN}/_/${ref}`, { headers: { "accept-encoding": "gzip" } }));
      expect(res.status, ref).toBe(200);
      expect(res.headers.get("content-encoding")).toBe("gzip");
      expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      compressed += Number(res.headers.get("content-length"));
      const text = await new Response(res.body!.pipeThrough(new DecompressionStream("gzip"))).text();
      // Nothing left to fetch: no module imports another file.
      expect(text).not.toMatch(/\bfrom\s*"\.{1,2}\//);
    }
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(compressed).toBeLessThan(150 * 1024);

    const missing = await t.request("GET", "/_/assets/nope.js");
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("not_found");
    const traversal = await t.request("GET", "/_/assets/..%2F..%2Fsecurity.ts");
    expect(traversal.status).toBe(404);
    const malformed = await t.request("GET", "/_/assets/%E0%A4%A.js");
    expect(malformed.status).toBeLessThan(500);
    expect(malformed.body.error).toMatch(/not_found|invalid_request/);
  });

  it("first run: tells the exact CLI command and has no sign-up", async () => {
    const t = await startBackend();
    const res = await t.request("GET", "/_/session");
    expect(res.body).toEqual({ signedIn: false, firstRun: true, createDeveloperCommand: `npx tenantd developer create --email you@example.com --data-dir ${JSON.stringify(t.dataDir)}` });
    const signup = await t.request("POST", "/_/signup", { body: { email: "a@b.co", password: "whatever123" }, headers: { origin: ORIGIN } });
    expect(signup.status).toBe(404);
  });

  it("signs in with a cookie session tied to a developer session; sign-out ends it", async () => {
    const t = await startBackend();
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    const wrong = await t.request("POST", "/_/session", { body: { email: "dev@example.com", password: "nope nope nope" }, headers: { origin: ORIGIN } });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe("invalid_credentials");
    expect(wrong.headers.get("set-cookie")).toBeNull();

    const { cookie, setCookie, csrf } = await signIn(t);
    expect(setCookie).toMatch(/^tenantd_dashboard=dev_[^;]+; Path=\/_\/; Max-Age=2592000; HttpOnly; SameSite=Strict$/);
    const session = await t.request("GET", "/_/session", { headers: { cookie } });
    expect(session.body).toMatchObject({ signedIn: true, developer: { email: "dev@example.com" }, csrfToken: csrf, devMode: true });
    // The cookie holds a real developer session: the bearer API accepts the same token.
    const token = decodeURIComponent(cookie.split("=")[1]!);
    expect((await t.request("GET", "/api/v1/developer/me", { developer: token })).status).toBe(200);

    const apps = await t.request("GET", "/_/api/admin/apps", { headers: { cookie } });
    expect(apps.status).toBe(200);
    expect(apps.headers.get("cache-control")).toBe("no-store");
    expect(apps.body.apps.map((a: { id: string }) => a.id)).toEqual([t.app.id]);

    const noCsrf = await t.request("DELETE", "/_/session", { headers: { cookie, origin: ORIGIN } });
    expect(noCsrf.status).toBe(403);
    const out = await t.request("DELETE", "/_/session", { headers: { cookie, origin: ORIGIN, "x-dashboard-csrf": csrf } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^tenantd_dashboard=; Path=\/_\/; Max-Age=0/);
    const after = await t.request("GET", "/_/api/admin/apps", { headers: { cookie } });
    expect(after.status).toBe(401);
    expect((await t.request("GET", "/api/v1/developer/me", { developer: token })).status).toBe(401);
  });

  it("refuses state changes without a same-origin Origin and the session's CSRF token", async () => {
    const t = await startBackend();
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    const { cookie, csrf } = await signIn(t);
    const create = (headers: Record<string, string>) => t.request("POST", "/_/api/admin/apps", { body: { name: "New" }, headers: { cookie, ...headers } });
    const cases: [string, Record<string, string>, number][] = [
      ["no Origin", { "x-dashboard-csrf": csrf }, 403],
      ["another site", { origin: "https://evil.example", "x-dashboard-csrf": csrf }, 403],
      ["Origin null", { origin: "null", "x-dashboard-csrf": csrf }, 403],
      ["no token", { origin: ORIGIN }, 403],
      ["another session's token", { origin: ORIGIN, "x-dashboard-csrf": "A".repeat(43) }, 403],
      ["same origin with the token", { origin: ORIGIN, "x-dashboard-csrf": csrf }, 201],
    ];
    for (const [what, headers, status] of cases) {
      const res = await create(headers);
      expect({ what, status: res.status }).toEqual({ what, status });
      if (status === 403) expect(res.body.error).toBe("forbidden");
    }
    expect((await t.backend.admin.listApps()).filter((a) => a.name === "New")).toHaveLength(1);
    // Sign-in from another site is refused too (login CSRF).
    const crossLogin = await t.request("POST", "/_/session", { body: { email: "dev@example.com", password: "developer password" }, headers: { origin: "https://evil.example" } });
    expect(crossLogin.status).toBe(403);
    // Only admin paths are forwarded.
    for (const path of ["/_/api/auth/signup", "/_/api/developer/login", "/_/api/data/notes", "/_/api/admin/../auth/login"]) {
      const res = await t.request("POST", path, { body: {}, headers: { cookie, origin: ORIGIN, "x-dashboard-csrf": csrf } });
      expect(res.status, path).toBe(404);
    }
  });

  it("marks the cookie Secure over HTTPS (behind a trusted proxy)", async () => {
    const t = await startBackend({ trustProxy: true });
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    const res = await t.request("POST", "/_/session", {
      body: { email: "dev@example.com", password: "developer password" },
      headers: { origin: "https://tenantd.example.com", host: "tenantd.example.com", "x-forwarded-proto": "https", "x-forwarded-host": "tenantd.example.com" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get("set-cookie")).toMatch(/; Secure$/);
  });

  it("rate-limits sign-in per email", async () => {
    const t = await startBackend({ rateLimit: { perEmail: 3, perIp: 100, windowSeconds: 60 } });
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    const attempt = () => t.request("POST", "/_/session", { body: { email: "dev@example.com", password: "wrong password" }, headers: { origin: ORIGIN } });
    for (let i = 0; i < 3; i++) expect((await attempt()).status).toBe(401);
    const limited = await attempt();
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe("rate_limited");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  it("dashboard: false turns it off; path moves it; bad paths fail at startup", async () => {
    const off = await startBackend({ dashboard: false });
    expect((await off.request("GET", "/_/")).status).toBe(404);
    expect((await off.request("GET", "/_/session")).status).toBe(404);
    const moved = await startBackend({ dashboard: { path: "/admin/ui/" } });
    expect((await moved.request("GET", "/_/")).status).toBe(404);
    const movedPage = await moved.request("GET", "/admin/ui/");
    expect(movedPage.status).toBe(200);
    expect((await moved.request("GET", `/admin/ui/${scriptOf(movedPage.text)}`)).status).toBe(200);
    await expect(startBackend({ dashboard: { path: "no-slash" } })).rejects.toThrow(/option dashboard\.path must be a path like "\/_"/);
  });

  it("works under mount() in a host h3 app: assets, cookie path and API carry the prefix", async () => {
    const t = await startBackend();
    await t.backend.admin.createDeveloper({ email: "dev@example.com", password: "developer password" });
    const host = new H3().mount("/backend", t.backend);
    const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
      const res = await host.fetch(new Request(`${ORIGIN}${path}`, { method, headers: { ...(body ? { "content-type": "application/json" } : {}), ...headers }, body: body ? JSON.stringify(body) : undefined }));
      return { status: res.status, headers: res.headers, text: await res.text() };
    };
    const page = await send("GET", "/backend/_/");
    expect(page.status).toBe(200);
    expect((await send("GET", `/backend/_/${scriptOf(page.text)}`)).status).toBe(200);
    const login = await send("POST", "/backend/_/session", { origin: ORIGIN }, { email: "dev@example.com", password: "developer password" });
    expect(login.status, login.text).toBe(200);
    expect(login.headers.get("set-cookie")).toContain("Path=/backend/_/;");
    const cookie = login.headers.get("set-cookie")!.split(";")[0]!;
    const apps = await send("GET", "/backend/_/api/admin/apps", { cookie });
    expect(apps.status, apps.text).toBe(200);
    expect(JSON.parse(apps.text).apps).toHaveLength(1);
  });
});
