// An attacker's review of the developer's live view of a tenant's records
// (src/realtime/admin-live.ts) and the admin organization routes, over real HTTP.
import { describe, expect, it } from "vitest";
import { buildRequest, developerSession, expectError, serveHttp, signupTenant, startBackend, toReply, type ReqOptions, type TestTenant } from "./_helpers.ts";
import { openSse, stalledSse, type SseEvent } from "./_sse.ts";
import type { TenantBackendConfig } from "../src/index.ts";

const OWNER = { email: "owner@example.com", password: "developer password" };
const recordEvents = (e: SseEvent) => ["created", "updated", "deleted", "left"].includes(e.event);

async function liveBackend(config: TenantBackendConfig = {}) {
  const t = await startBackend(config);
  const { url } = await serveHttp(t.backend);
  const dev = await developerSession(t, OWNER.email, OWNER.password); // adopts the default app
  const tenant = await signupTenant(t);
  const call = async (method: string, path: string, opts: ReqOptions = {}) => toReply(await fetch(buildRequest(url, method, path, opts)));
  const create = async (who: TestTenant, collection: string, data: unknown) => (await call("POST", `/api/v1/data/${collection}`, { bearer: who.bearer, body: { data } })).body.record as { id: string };
  const livePath = (appId: string, tenantId: string, collection: string) => `/api/v1/admin/apps/${appId}/tenants/${encodeURIComponent(tenantId)}/records/${collection}/live`;
  const watch = (appId: string, tenantId: string, collection: string, token = dev) => openSse(url + livePath(appId, tenantId, collection), { authorization: `Bearer ${token}` });
  /** A second app of the owner's, with a tenant of its own. */
  const secondApp = async () => {
    const app = await t.backend.admin.createApp({ name: "Second", ownerEmail: OWNER.email });
    const member = await signupTenant(t, { key: app.publishableKey, appId: app.id });
    return { app, member };
  };
  return { t, url, dev, tenant, call, create, livePath, watch, secondApp };
}

/** Signs in to the dashboard, from `client` when given (an address a trusted proxy forwards). */
async function dashboardSignIn(b: Awaited<ReturnType<typeof liveBackend>>, who: { email: string; password: string }, client?: string) {
  const res = await b.call("POST", "/_/session", { body: who, headers: { origin: b.url, ...(client ? { "x-forwarded-for": client } : {}) } });
  expect(res.status, res.text).toBe(200);
  return { cookie: res.headers.get("set-cookie")!.split(";")[0]!, csrf: res.body.csrfToken as string };
}

describe("the developer's live view, attacked", () => {
  it("a view of an app that changed hands ends, also when the same developer session watches another app of its own", async () => {
    const b = await liveBackend();
    const { app, member } = await b.secondApp();
    // Before: the session's streams were checked once, against the first one's app only.
    const kept = await b.watch(b.t.app.id, b.tenant.id, "notes");
    await kept.next((e) => e.event === "ready");
    const given = await b.watch(app.id, member.id, "notes");
    await given.next((e) => e.event === "ready");
    await developerSession(b.t, "heir@example.com");
    await b.t.backend.admin.setAppOwner(app.id, "heir@example.com");
    expect((await given.next((e) => e.event === "ended", 3000)).data).toMatchObject({ reason: "session_ended", message: expect.stringContaining("no longer yours") });
    await given.ended;
    await b.create(member, "notes", { secret: "written for the new owner" });
    // The view of the app still owned goes on.
    const mine = await b.create(b.tenant, "notes", { n: 1 });
    expect((await kept.next(recordEvents)).data.id).toBe(mine.id);
    expect(given.events.filter(recordEvents)).toEqual([]);
  });

  it("ends when the app is deleted", async () => {
    const b = await liveBackend();
    const { app, member } = await b.secondApp();
    const sse = await b.watch(app.id, member.id, "notes");
    await sse.next((e) => e.event === "ready");
    await b.t.backend.admin.deleteApp(app.id);
    expect((await sse.next((e) => e.event === "ended", 3000)).data.reason).toBe("session_ended");
    await sse.ended;
  });

  it("ends when the tenant is deleted", async () => {
    const b = await liveBackend();
    const sse = await b.watch(b.t.app.id, b.tenant.id, "notes");
    await sse.next((e) => e.event === "ready");
    expect((await b.call("DELETE", `/api/v1/admin/apps/${b.t.app.id}/tenants/${b.tenant.id}`, { developer: b.dev })).status).toBeLessThan(300);
    expect((await sse.next((e) => e.event === "ended", 3000)).data).toMatchObject({ reason: "tenant_deleted", message: expect.any(String) });
    await sse.ended;
  });

  it("through the dashboard behind a trusted proxy, each client counts for its own address and the audit trail names it", async () => {
    const b = await liveBackend({ trustProxy: true, realtime: { maxConnectionsPerIp: 1 } });
    const other = { email: "other@example.com", password: "developer password" };
    await b.t.backend.admin.createDeveloper(other);
    const { app, member } = await b.secondApp();
    await b.t.backend.admin.setAppOwner(app.id, other.email);
    const mine = await dashboardSignIn(b, OWNER, "203.0.113.1");
    const theirs = await dashboardSignIn(b, other, "203.0.113.2");
    const viaDashboard = (appId: string, tenantId: string) => `${b.url}/_/api${b.livePath(appId, tenantId, "notes").slice("/api/v1".length)}`;
    const first = await openSse(viaDashboard(b.t.app.id, b.tenant.id), { cookie: mine.cookie, "x-forwarded-for": "203.0.113.1" });
    expect(first.status).toBe(200);
    // Before: every dashboard call counted for the proxy's address, so one developer's views used up everyone's.
    const second = await openSse(viaDashboard(app.id, member.id), { cookie: theirs.cookie, "x-forwarded-for": "203.0.113.2" });
    expect(second.status, JSON.stringify(second.events)).toBe(200);
    const again = await openSse(viaDashboard(b.t.app.id, b.tenant.id), { cookie: mine.cookie, "x-forwarded-for": "203.0.113.1" });
    expect(again.status).toBe(429);
    expect(again.events[0]!.data.error).toBe("rate_limited");

    // An organization deleted from the dashboard is audited with the developer, their address and browser.
    const org = (await b.call("POST", "/api/v1/orgs", { bearer: b.tenant.bearer, body: { name: "Acme" } })).body.org as { id: string };
    const headers = { cookie: mine.cookie, origin: b.url, "x-dashboard-csrf": mine.csrf, "x-forwarded-for": "203.0.113.1", "user-agent": "Probe/1.0" };
    expect((await b.call("DELETE", `/_/api/admin/apps/${b.t.app.id}/orgs/${org.id}`, { headers })).status).toBe(204);
    const trail = await b.call("GET", `/api/v1/admin/apps/${b.t.app.id}/audit?action=org.deleted`, { developer: b.dev });
    const developerId = (await b.call("GET", "/api/v1/developer/me", { developer: b.dev })).body.developer.id;
    expect(trail.body.entries).toEqual([expect.objectContaining({ action: "org.deleted", target: org.id, actor: { type: "developer", id: developerId }, ip: "203.0.113.1", client: "Probe/1.0" })]);
  });

  it("a developer holds at most realtime.maxConnectionsPerTenant live views, whatever the tenants", async () => {
    const b = await liveBackend({ realtime: { maxConnectionsPerTenant: 2 } });
    const other = await signupTenant(b.t);
    const one = await b.watch(b.t.app.id, b.tenant.id, "notes");
    const two = await b.watch(b.t.app.id, other.id, "notes");
    expect([one.status, two.status]).toEqual([200, 200]);
    // Before: a developer's views were bounded only per address (maxConnectionsPerIp).
    const three = await b.watch(b.t.app.id, other.id, "todos");
    expect(three.status).toBe(429);
    expect(three.events[0]!.data).toMatchObject({ error: "rate_limited", message: expect.stringContaining("maxConnectionsPerTenant") });
    // The tenants' own streams are not taken by them, and a closed view frees its place.
    const own = await openSse(`${b.url}/api/v1/realtime`, { authorization: `Bearer ${b.tenant.accessToken}`, "x-service-app": b.t.app.id });
    expect(own.status).toBe(200);
    one.close();
    await new Promise((r) => setTimeout(r, 150));
    expect((await b.watch(b.t.app.id, other.id, "todos")).status).toBe(200);
  });

  it("through the dashboard, a reader that stops reading is dropped instead of buffered", async () => {
    const b = await liveBackend({ realtime: { maxBufferedBytes: 64 * 1024 } });
    const { cookie } = await dashboardSignIn(b, OWNER);
    const stalled = await stalledSse(b.url, `/_/api${b.livePath(b.t.app.id, b.tenant.id, "big").slice("/api/v1".length)}`, { cookie });
    const hub = b.t.backend.core.realtime!;
    const big = "x".repeat(200 * 1024);
    for (let n = 0; hub.streamCount > 0 && n < 300; n++) await b.create(b.tenant, "big", { big, n });
    await new Promise((r) => setTimeout(r, 100));
    expect(hub.streamCount).toBe(0);
    const rest = await stalled.rest();
    expect(rest).toContain('"reason":"slow_client"');
  });
});

describe("the admin organization routes and the live view, refused to everyone but the app's developer", () => {
  it("another developer (the backup operator too), a tenant or impersonation token, the publishable key, and my app id with another app's tenant or organization", async () => {
    const b = await liveBackend();
    const stranger = await developerSession(b.t);
    // The server's backup operator reads every app's data in a backup, and no app through the admin API.
    const operator = await developerSession(b.t);
    const operatorId = (await b.call("GET", "/api/v1/developer/me", { developer: operator })).body.developer.id as string;
    await b.t.backend.core.db.developers.setBackupOperator(operatorId, true, Date.now());
    const theirs = await b.t.backend.admin.createApp({ name: "Theirs" });
    const foreigner = await signupTenant(b.t, { key: theirs.publishableKey, appId: theirs.id });
    const foreignOrg = (await b.call("POST", "/api/v1/orgs", { bearer: foreigner.bearer, body: { name: "Theirs" } })).body.org as { id: string };
    const org = (await b.call("POST", "/api/v1/orgs", { bearer: b.tenant.bearer, body: { name: "Acme" } })).body.org as { id: string };
    const imp = await b.call("POST", `/api/v1/admin/apps/${b.t.app.id}/tenants/${b.tenant.id}/impersonate`, { developer: b.dev });
    expect(imp.status, imp.text).toBe(201);
    const app = `/api/v1/admin/apps/${b.t.app.id}`;
    const routes: [string, string][] = [
      ["GET", b.livePath(b.t.app.id, b.tenant.id, "notes")],
      ["DELETE", `${app}/orgs/${org.id}`],
      ["GET", `${app}/tenants/${b.tenant.id}/orgs`],
    ];
    const who: [string, ReqOptions, number, string][] = [
      ["nobody", {}, 401, "unauthorized"],
      ["the publishable key", { key: b.t.app.publishableKey }, 401, "unauthorized"],
      ["the tenant", { bearer: b.tenant.bearer }, 401, "unauthorized"],
      ["an impersonation session", { bearer: { accessToken: imp.body.accessToken, appId: b.t.app.id } }, 401, "unauthorized"],
      ["another developer", { developer: stranger }, 404, "not_found"],
      ["the backup operator", { developer: operator }, 404, "not_found"],
    ];
    for (const [method, path] of routes) {
      for (const [name, opts, status, code] of who) {
        const res = await b.call(method, path, opts);
        expect({ route: `${method} ${path}`, name, status: res.status, error: res.body?.error }).toEqual({ route: `${method} ${path}`, name, status, error: code });
      }
    }
    // My own app's id with another app's tenant or organization: not found, and nothing deleted.
    expectError(await b.call("GET", b.livePath(b.t.app.id, foreigner.id, "notes"), { developer: b.dev }), 404, "not_found");
    expectError(await b.call("GET", b.livePath(b.t.app.id, foreigner.email, "notes"), { developer: b.dev }), 404, "not_found");
    expectError(await b.call("GET", `${app}/tenants/${foreigner.id}/orgs`, { developer: b.dev }), 404, "not_found");
    expectError(await b.call("DELETE", `${app}/orgs/${foreignOrg.id}`, { developer: b.dev }), 404, "not_found");
    expect((await b.call("GET", `/api/v1/orgs/${foreignOrg.id}`, { bearer: foreigner.bearer })).status).toBe(200);
    expect((await b.call("GET", `/api/v1/orgs/${org.id}`, { bearer: b.tenant.bearer })).status).toBe(200);
  });
});
