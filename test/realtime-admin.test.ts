// The developer's live view of a tenant's collection (src/realtime/admin-live.ts): what the
// dashboard's records browser reads, over real HTTP, directly and through the dashboard.
import { describe, expect, it } from "vitest";
import { buildRequest, developerSession, expectError, serveHttp, signupTenant, startBackend, toReply, type ReqOptions, type TestTenant } from "./_helpers.ts";
import { openSse, type SseEvent } from "./_sse.ts";
import type { TenantBackendConfig } from "../src/index.ts";

const OWNER = { email: "owner@example.com", password: "developer password" };
const recordEvents = (e: SseEvent) => ["created", "updated", "deleted", "left"].includes(e.event);

async function liveBackend(config: TenantBackendConfig = {}) {
  const t = await startBackend(config);
  const { url } = await serveHttp(t.backend);
  // The first developer adopts the app.
  const dev = await developerSession(t, OWNER.email, OWNER.password);
  const tenant = await signupTenant(t);
  const call = async (method: string, path: string, opts: ReqOptions = {}) => toReply(await fetch(buildRequest(url, method, path, opts)));
  const records = (who: TestTenant) => ({
    create: async (collection: string, data: unknown) => (await call("POST", `/api/v1/data/${collection}`, { bearer: who.bearer, body: { data } })).body.record,
    update: async (collection: string, id: string, data: unknown) => (await call("PUT", `/api/v1/data/${collection}/${id}`, { bearer: who.bearer, body: { data } })).body.record,
    remove: (collection: string, id: string) => call("DELETE", `/api/v1/data/${collection}/${id}`, { bearer: who.bearer }),
  });
  const livePath = (tenantId: string, collection: string, filter?: unknown) =>
    `/api/v1/admin/apps/${t.app.id}/tenants/${encodeURIComponent(tenantId)}/records/${collection}/live${filter === undefined ? "" : `?filter=${encodeURIComponent(JSON.stringify(filter))}`}`;
  const watch = (tenantId: string, collection: string, filter?: unknown, token = dev) => openSse(url + livePath(tenantId, collection, filter), { authorization: `Bearer ${token}` });
  return { t, url, dev, tenant, call, records, livePath, watch };
}

describe("the developer's live view of a tenant's records", () => {
  it("streams the tenant's creates, updates and deletes in that collection, and nothing of another tenant or collection", async () => {
    const b = await liveBackend();
    const other = await signupTenant(b.t);
    const sse = await b.watch(b.tenant.id, "notes");
    expect(sse.status).toBe(200);
    expect(sse.headers.get("content-type")).toMatch(/^text\/event-stream/);
    await sse.next((e) => e.event === "ready");
    const mine = b.records(b.tenant);
    await b.records(other).create("notes", { secret: "other tenant" });
    await mine.create("todos", { title: "another collection" });
    const a = await mine.create("notes", { title: "first" });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "created", data: { collection: "notes", id: a.id, subscriptions: ["live"], record: a } });
    const changed = await mine.update("notes", a.id, { title: "changed" });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "updated", data: { id: a.id, record: changed } });
    expect((await mine.remove("notes", a.id)).status).toBe(204);
    expect(await sse.next(recordEvents)).toMatchObject({ event: "deleted", data: { id: a.id } });
    expect(sse.events.filter(recordEvents)).toHaveLength(3);
    // The tenant's email works as the tenant reference, as on the admin records route.
    const byEmail = await b.watch(b.tenant.email, "notes");
    await byEmail.next((e) => e.event === "ready");
    const c = await mine.create("notes", { title: "seen by email" });
    expect((await byEmail.next(recordEvents)).data.id).toBe(c.id);
  });

  it("narrows to a filter: a record that stops matching is a left event", async () => {
    const b = await liveBackend();
    const sse = await b.watch(b.tenant.id, "todos", { done: false });
    await sse.next((e) => e.event === "ready");
    const mine = b.records(b.tenant);
    await mine.create("todos", { done: true });
    const a = await mine.create("todos", { done: false });
    expect((await sse.next(recordEvents)).data.id).toBe(a.id);
    await mine.update("todos", a.id, { done: true });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "left", data: { id: a.id } });
  });

  it("reads exactly like the admin records route: another developer's app, an unknown tenant, a bad collection or filter are refused", async () => {
    const b = await liveBackend();
    const stranger = await developerSession(b.t);
    const refused = async (path: string, token: string) => b.call("GET", path, { developer: token });
    expectError(await refused(b.livePath(b.tenant.id, "notes"), stranger), 404, "not_found");
    expectError(await refused(b.livePath("ten_nope", "notes"), b.dev), 404, "not_found");
    expectError(await refused(b.livePath(b.tenant.id, "no-dash"), b.dev), 400, "invalid_request");
    expectError(await refused(b.livePath(b.tenant.id, "notes", { n: { $regex: "x" } }), b.dev), 400, "invalid_filter");
    expectError(await b.call("GET", b.livePath(b.tenant.id, "notes")), 401, "unauthorized");
    // A tenant's access token is not a developer session.
    expectError(await b.call("GET", b.livePath(b.tenant.id, "notes"), { bearer: b.tenant.bearer }), 401, "unauthorized");
  });

  it("ends within a second of the developer signing out, and takes no stream or subscription of the tenant's", async () => {
    const b = await liveBackend({ realtime: { maxConnectionsPerTenant: 1 } });
    const sse = await b.watch(b.tenant.id, "notes");
    const stream = (await sse.next((e) => e.event === "ready")).data.stream as string;
    // The tenant still opens its one stream, and cannot add subscriptions to the developer's.
    const own = await openSse(`${b.url}/api/v1/realtime`, { authorization: `Bearer ${b.tenant.accessToken}`, "x-service-app": b.tenant.bearer.appId });
    expect(own.status).toBe(200);
    expectError(await b.call("POST", "/api/v1/realtime/subscriptions", { bearer: b.tenant.bearer, body: { stream, collection: "secrets" } }), 404, "not_found");
    const started = Date.now();
    expect((await b.call("POST", "/api/v1/developer/logout", { developer: b.dev })).status).toBeLessThan(300);
    const ended = await sse.next((e) => e.event === "ended", 3000);
    expect(Date.now() - started).toBeLessThan(1500);
    expect(ended.data.reason).toBe("session_ended");
    await sse.ended;
  });

  it("ends when the app passes to another developer", async () => {
    const b = await liveBackend();
    const sse = await b.watch(b.tenant.id, "notes");
    await sse.next((e) => e.event === "ready");
    await developerSession(b.t, "heir@example.com");
    await b.t.backend.admin.setAppOwner(b.t.app.id, "heir@example.com");
    expect((await sse.next((e) => e.event === "ended", 3000)).data.reason).toBe("session_ended");
    await sse.ended;
  });

  it("through the dashboard: the cookie session streams, and a reconnect with Last-Event-ID gets what it missed", async () => {
    const b = await liveBackend();
    const signIn = await b.call("POST", "/_/session", { body: OWNER, headers: { origin: b.url } });
    expect(signIn.status, signIn.text).toBe(200);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const path = `/_/api${b.livePath(b.tenant.id, "notes").slice("/api/v1".length)}`;
    const first = await openSse(b.url + path, { cookie });
    expect(first.status, JSON.stringify(first.events)).toBe(200);
    await first.next((e) => e.event === "ready");
    const mine = b.records(b.tenant);
    const a = await mine.create("notes", { n: 1 });
    expect((await first.next(recordEvents)).data.id).toBe(a.id);
    const resumeFrom = first.lastEventId;
    first.close();
    const missed = await mine.create("notes", { n: 2 });
    const again = await openSse(b.url + path, { cookie, "last-event-id": resumeFrom });
    expect((await again.next((e) => e.event === "ready")).data.resumed).toBe(true);
    expect(await again.next(recordEvents)).toMatchObject({ event: "created", data: { id: missed.id } });
  });
});
