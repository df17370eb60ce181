import { describe, expect, it } from "vitest";
import { expectError, serveHttp, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { openSse, stalledSse, type SseClient } from "./_sse.ts";
import type { TenantBackendConfig } from "../src/index.ts";

/** A backend served over real HTTP, with a tenant and helpers for its streams and records. */
async function realtimeBackend(config: TenantBackendConfig = {}) {
  const t = await startBackend(config);
  const { url } = await serveHttp(t.backend);
  const tenant = await signupTenant(t);
  return { url, tenant, ...clientFor(t, url, tenant) };
}

function clientFor(t: TestBackend, url: string, tenant: TestTenant) {
  const headers = { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": tenant.bearer.appId };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, { method, headers: { ...headers, ...(body !== undefined && { "content-type": "application/json" }) }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined, text };
  };
  return {
    call,
    open: async (extra: Record<string, string> = {}) => {
      const sse = await openSse(`${url}/api/v1/realtime`, { ...headers, ...extra });
      return sse;
    },
    ready: async (sse: SseClient) => (await sse.next((e) => e.event === "ready")).data.stream as string,
    subscribe: (stream: string, spec: Record<string, unknown>) => call("POST", "/api/v1/realtime/subscriptions", { stream, ...spec }),
    create: async (collection: string, data: unknown) => (await call("POST", `/api/v1/data/${collection}`, { data })).body.record,
    update: async (collection: string, id: string, data: unknown) => (await call("PUT", `/api/v1/data/${collection}/${id}`, { data })).body.record,
    remove: (collection: string, id: string) => call("DELETE", `/api/v1/data/${collection}/${id}`),
    t,
  };
}

const recordEvents = (e: { event: string }) => ["created", "updated", "deleted", "left"].includes(e.event);

describe("realtime streams", () => {
  it("sends created, updated, left and deleted events for a filtered subscription, with the full record", async () => {
    const rt = await realtimeBackend();
    const sse = await rt.open();
    expect(sse.status).toBe(200);
    expect(sse.headers.get("content-type")).toMatch(/^text\/event-stream/);
    const stream = await rt.ready(sse);
    const sub = await rt.subscribe(stream, { collection: "todos", filter: { done: false } });
    expect(sub.status).toBe(201);
    expect(sub.body.subscription).toEqual({ id: expect.stringMatching(/^sub_/), collection: "todos", filter: { done: false }, record: null });
    const subId = sub.body.subscription.id;

    const a = await rt.create("todos", { title: "milk", done: false });
    await rt.create("todos", { title: "bread", done: true }); // does not match: no event
    await rt.create("notes", { done: false }); // another collection: no event
    const created = await sse.next(recordEvents);
    expect(created).toMatchObject({ event: "created", data: { collection: "todos", id: a.id, subscriptions: [subId], record: a } });

    const updated = await rt.update("todos", a.id, { title: "oat milk" });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "updated", data: { id: a.id, subscriptions: [subId], record: updated } });

    await rt.update("todos", a.id, { done: true });
    const left = await sse.next(recordEvents);
    expect(left.event).toBe("left");
    expect(left.data).toEqual({ collection: "todos", id: a.id, subscriptions: [subId] });

    // Back into the filter, then deleted while it matches.
    await rt.update("todos", a.id, { done: false });
    expect((await sse.next(recordEvents)).event).toBe("updated");
    expect((await rt.remove("todos", a.id)).status).toBe(204);
    expect(await sse.next(recordEvents)).toMatchObject({ event: "deleted", data: { collection: "todos", id: a.id, subscriptions: [subId] } });
    // Every event carries a resume position.
    expect(sse.events.filter(recordEvents).every((e) => /^\d+\.\d+$/.test(e.id))).toBe(true);
    expect(sse.events.filter(recordEvents)).toHaveLength(5);
  });

  it("follows one record by id, and several subscriptions share one stream", async () => {
    const rt = await realtimeBackend();
    const sse = await rt.open();
    const stream = await rt.ready(sse);
    const a = await rt.create("todos", { n: 1 });
    const one = (await rt.subscribe(stream, { collection: "todos", record: a.id })).body.subscription.id;
    const all = (await rt.subscribe(stream, { collection: "todos" })).body.subscription.id;
    await rt.update("todos", a.id, { n: 2 });
    const e = await sse.next(recordEvents);
    expect(e.event).toBe("updated");
    expect(e.data.subscriptions.sort()).toEqual([one, all].sort());
    const b = await rt.create("todos", { n: 3 });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "created", data: { id: b.id, subscriptions: [all] } });

    const removed = await rt.call("DELETE", `/api/v1/realtime/subscriptions?stream=${stream}&id=${all}`);
    expect(removed.body).toEqual({ removed: [all] });
    await rt.create("todos", { n: 4 });
    await rt.update("todos", a.id, { n: 5 });
    expect(await sse.next(recordEvents)).toMatchObject({ event: "updated", data: { id: a.id, subscriptions: [one] } });
  });

  it("never sends another tenant's or another app's records, and refuses their streams", async () => {
    const rt = await realtimeBackend();
    const other = clientFor(rt.t, rt.url, await signupTenant(rt.t));
    const sse = await rt.open();
    const stream = await rt.ready(sse);
    await rt.subscribe(stream, { collection: "todos" });
    await other.create("todos", { secret: true });
    expectError(await other.subscribe(stream, { collection: "todos" }) as never, 404, "not_found");
    const mine = await rt.create("todos", { mine: true });
    const e = await sse.next(recordEvents);
    expect(e.data.id).toBe(mine.id);
    expect(sse.events.filter(recordEvents)).toHaveLength(1);
  });

  it("answers bad input with { error, message }, never a 500", async () => {
    const rt = await realtimeBackend({ realtime: { maxSubscriptionsPerConnection: 2, maxFilterBytes: 64 } });
    const sse = await rt.open();
    const stream = await rt.ready(sse);
    const check = async (spec: Record<string, unknown>, status: number, code: string) => expectError((await rt.call("POST", "/api/v1/realtime/subscriptions", spec)) as never, status, code);
    await check({ stream, collection: "to-dos" }, 400, "invalid_request");
    await check({ stream, collection: "todos", filter: { done: { $regex: "x" } } }, 400, "invalid_filter");
    await check({ stream, collection: "todos", filter: "{not json" }, 400, "invalid_filter");
    await check({ stream, collection: "todos", filter: { $text: { $search: "milk" } } }, 400, "invalid_filter");
    await check({ stream, collection: "todos", filter: { title: "x".repeat(80) } }, 400, "invalid_filter");
    await check({ stream, collection: "todos", filter: {}, record: "rec_1" }, 400, "invalid_request");
    await check({ stream: "rts_nope", collection: "todos" }, 404, "not_found");
    await check({ stream, filter: {} }, 400, "invalid_request");
    await check({ stream, subscriptions: "x" }, 400, "invalid_request");
    await check({ collection: "todos" }, 400, "invalid_request");
    expect((await rt.subscribe(stream, { collection: "todos" })).status).toBe(201);
    expect((await rt.subscribe(stream, { collection: "notes" })).status).toBe(201);
    await check({ stream, collection: "more" }, 409, "conflict");
    expectError((await rt.call("DELETE", `/api/v1/realtime/subscriptions?stream=${stream}&id=sub_nope`)) as never, 404, "not_found");
    expectError((await rt.call("DELETE", `/api/v1/realtime/subscriptions?stream=${stream}`)) as never, 400, "invalid_request");
    // No bearer, a bad ticket.
    const anonymous = await openSse(`${rt.url}/api/v1/realtime`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.events[0]!.data).toMatchObject({ error: "unauthorized", message: expect.any(String) });
    const badTicket = await openSse(`${rt.url}/api/v1/realtime?ticket=rtt_nope`);
    expect(badTicket.status).toBe(401);
  });

  it("opens a stream with a one-use ticket, for EventSource", async () => {
    const rt = await realtimeBackend();
    const issued = await rt.call("POST", "/api/v1/realtime/ticket");
    expect(issued.status).toBe(201);
    expect(issued.headers.get("cache-control")).toBe("no-store");
    expect(issued.body).toEqual({ ticket: expect.stringMatching(/^rtt_/), expiresIn: 30 });
    const sse = await openSse(`${rt.url}/api/v1/realtime?ticket=${issued.body.ticket}`);
    expect(sse.status).toBe(200);
    const stream = await rt.ready(sse);
    await rt.subscribe(stream, { collection: "todos" });
    const a = await rt.create("todos", { x: 1 });
    expect((await sse.next(recordEvents)).data.id).toBe(a.id);
    // Used once: a second stream with it is refused; so is one past its 30 s.
    const again = await openSse(`${rt.url}/api/v1/realtime?ticket=${issued.body.ticket}`);
    expect(again.status).toBe(401);
    const late = (await rt.call("POST", "/api/v1/realtime/ticket")).body.ticket;
    rt.t.clock.advance(31_000);
    expect((await openSse(`${rt.url}/api/v1/realtime?ticket=${late}`)).status).toBe(401);
  });
});

describe("realtime resume", () => {
  it("replays every missed event in order exactly once after Last-Event-ID, then carries on live", async () => {
    const rt = await realtimeBackend();
    const first = await rt.open();
    const stream = await rt.ready(first);
    await rt.subscribe(stream, { collection: "todos" });
    const a = await rt.create("todos", { n: 1 });
    expect((await first.next(recordEvents)).data.id).toBe(a.id);
    const position = first.lastEventId;
    first.close();

    // Missed while away: two creates, an update and a delete.
    const b = await rt.create("todos", { n: 2 });
    const c = await rt.create("todos", { n: 3 });
    await rt.update("todos", a.id, { n: 10 });
    await rt.remove("todos", b.id);

    const second = await rt.open({ "last-event-id": position });
    const ready = await second.next((e) => e.event === "ready");
    expect(ready.data.resumed).toBe(true);
    // Nothing is replayed before the stream says what it follows.
    await new Promise((r) => setTimeout(r, 300));
    expect(second.events.filter(recordEvents)).toHaveLength(0);
    const resubscribed = await rt.call("POST", "/api/v1/realtime/subscriptions", { stream: ready.data.stream, subscriptions: [{ collection: "todos" }] });
    expect(resubscribed.status).toBe(201);
    const replayed = await second.collect(4, recordEvents);
    expect(replayed.map((e) => [e.event, e.data.id])).toEqual([
      ["created", b.id],
      ["created", c.id],
      ["updated", a.id],
      ["deleted", b.id],
    ]);
    const d = await rt.create("todos", { n: 4 });
    const live = await second.collect(5, recordEvents);
    expect(live[4]!.data.id).toBe(d.id);
    const seqs = second.events.filter(recordEvents).map((e) => Number(e.id.split(".")[0]));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(new Set(seqs).size).toBe(seqs.length);
  });

  it("replays exactly once while writes keep coming during the reconnect", async () => {
    const rt = await realtimeBackend();
    const first = await rt.open();
    await rt.subscribe(await rt.ready(first), { collection: "todos" });
    await rt.create("todos", { n: 0 });
    await first.next(recordEvents);
    const position = first.lastEventId;
    first.close();
    let writing = true;
    const written: string[] = [];
    const writer = (async () => {
      for (let i = 1; writing || i < 10; i++) written.push((await rt.create("todos", { n: i })).id);
    })();
    await new Promise((r) => setTimeout(r, 100));
    const second = await rt.open({ "last-event-id": position });
    await rt.subscribe(await rt.ready(second), { collection: "todos" });
    await new Promise((r) => setTimeout(r, 300));
    writing = false;
    await writer;
    const got = await second.collect(written.length, recordEvents, 10_000);
    await new Promise((r) => setTimeout(r, 1200)); // a tail tick: nothing more may come
    expect(second.events.filter(recordEvents).map((e) => e.data.id)).toEqual(written);
    expect(got.length).toBe(written.length);
  });

  it("sends reset for a position older than the retention window, or not its own", async () => {
    const rt = await realtimeBackend({ realtime: { retentionSeconds: 60 } });
    const first = await rt.open();
    await rt.ready(first);
    const position = first.lastEventId;
    first.close();
    rt.t.clock.advance(61_000);
    const late = await rt.open({ "last-event-id": position });
    expect((await late.next((e) => e.event === "ready")).data.resumed).toBe(false);
    expect((await late.next()).event).toBe("reset");
    const bogus = await rt.open({ "last-event-id": "not-a-position" });
    await bogus.next((e) => e.event === "ready");
    expect((await bogus.next()).event).toBe("reset");
  });

  it("keeps an idle stream open with keep-alive comments that carry its position", async () => {
    const rt = await realtimeBackend({ realtime: { keepAliveSeconds: 1 } });
    const sse = await rt.open();
    await rt.ready(sse);
    const before = sse.lastEventId;
    rt.t.clock.advance(5000);
    await new Promise((r) => setTimeout(r, 1600));
    expect(sse.comments).toBeGreaterThanOrEqual(1);
    expect(sse.lastEventId).not.toBe(before);
    expect(sse.lastEventId.split(".")[0]).toBe(before.split(".")[0]);
  });
});

describe("realtime revocation and limits", () => {
  it("ends the stream within 1 s of logout and of refresh-token reuse", async () => {
    const rt = await realtimeBackend({ refreshReuseGraceSeconds: 0 });
    const sse = await rt.open();
    await rt.ready(sse);
    const started = Date.now();
    expect((await rt.call("POST", "/api/v1/auth/logout", { refreshToken: rt.tenant.refreshToken })).status).toBeLessThan(300);
    await sse.ended;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sse.events.at(-1)).toMatchObject({ event: "ended", data: { reason: "session_ended" } });

    const other = await signupTenant(rt.t);
    const client = clientFor(rt.t, rt.url, other);
    const second = await client.open();
    await client.ready(second);
    const key = { "x-service-key": rt.t.app.publishableKey, "content-type": "application/json" };
    const refresh = () => fetch(`${rt.url}/api/v1/auth/refresh`, { method: "POST", headers: key, body: JSON.stringify({ refreshToken: other.refreshToken }) });
    expect((await refresh()).status).toBe(200);
    rt.t.clock.advance(1000); // past the grace of 0 s
    const reused = Date.now();
    expect((await refresh()).status).toBe(401);
    await second.ended;
    expect(Date.now() - reused).toBeLessThan(1000);
    expect(second.events.at(-1)!.event).toBe("ended");
  });

  it("ends the stream when the account is deleted, and refuses its ticket after logout", async () => {
    const rt = await realtimeBackend();
    const ticket = (await rt.call("POST", "/api/v1/realtime/ticket")).body.ticket;
    const sse = await rt.open();
    await rt.ready(sse);
    const core = rt.t.backend.core;
    const app = (await core.db.apps.findById(rt.tenant.bearer.appId))!;
    const { deleteTenant } = await import("../src/account/delete.ts");
    const started = Date.now();
    await deleteTenant(core, app, rt.tenant.id, "admin_delete");
    await sse.ended;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sse.events.at(-1)!.event).toBe("ended");
    const late = await openSse(`${rt.url}/api/v1/realtime?ticket=${ticket}`);
    expect(late.status).toBe(401);
  });

  it("limits streams per tenant and per IP, with 429 and a message", async () => {
    const rt = await realtimeBackend({ realtime: { maxConnectionsPerTenant: 1, maxConnectionsPerIp: 2 } });
    const one = await rt.open();
    await rt.ready(one);
    const two = await rt.open();
    expect(two.status).toBe(429);
    expect(two.events[0]!.data).toMatchObject({ error: "rate_limited", message: expect.stringContaining("maxConnectionsPerTenant") });
    one.close();
    await new Promise((r) => setTimeout(r, 100));
    const again = await rt.open();
    expect(again.status).toBe(200);
    const b = clientFor(rt.t, rt.url, await signupTenant(rt.t));
    expect((await b.open()).status).toBe(200);
    const c = clientFor(rt.t, rt.url, await signupTenant(rt.t));
    const third = await c.open();
    expect(third.status).toBe(429);
    expect(third.events[0]!.data.message).toContain("maxConnectionsPerIp");
  });

  it("drops a client that does not read, with a final event, instead of buffering", async () => {
    const rt = await realtimeBackend({ realtime: { maxBufferedBytes: 64 * 1024 } });
    const ticket = (await rt.call("POST", "/api/v1/realtime/ticket")).body.ticket;
    // A raw socket that reads the stream's first bytes (its id), then nothing.
    const { received, rest: readRest } = await stalledSse(rt.url, `/api/v1/realtime?ticket=${ticket}`);
    const stream = /"stream":"(rts_[^"]+)"/.exec(received)![1]!;
    expect((await rt.subscribe(stream, { collection: "big" })).status).toBe(201);
    const hub = rt.t.backend.core.realtime!;
    const big = "x".repeat(200 * 1024);
    for (let n = 0; hub.streamCount > 0 && n < 300; n++) await rt.create("big", { big, n });
    await new Promise((r) => setTimeout(r, 100));
    expect(hub.streamCount).toBe(0);
    const rest = await readRest();
    expect(rest).toContain("event: dropped");
    expect(rest).toContain('"reason":"slow_client"');
  });
});

describe("realtime tenant events", () => {
  it("tells the tenant's streams when its subscription or entitlements change, and no one else's", async () => {
    const { billingBackend, form, pathOf } = await import("./billing-fixtures.ts");
    const b = await billingBackend();
    const { url } = await serveHttp(b.t.backend);
    const tenant = await b.tenant();
    const bystander = clientFor(b.t, url, await b.tenant());
    const mine = clientFor(b.t, url, tenant);
    const sse = await mine.open();
    await mine.ready(sse);
    const theirs = await bystander.open();
    await bystander.ready(theirs);
    const pro = await b.plan({ name: "Pro", slug: "pro", entitlements: { projects: 5 } });

    const gift = await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId: pro.id, days: 30 });
    expect(gift.status, gift.text).toBeLessThan(300);
    expect((await sse.next((e) => e.event === "tenant")).data).toEqual({ type: "entitlements", data: { source: "gift", change: "granted", planId: pro.id } });

    const checkout = await b.tenantPost(tenant, "/checkout", { planId: pro.id, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" });
    expect(checkout.status, checkout.text).toBe(200);
    expect((await b.t.request("POST", pathOf(checkout.body.url), form({ action: "confirm" }))).status).toBe(303);
    expect((await sse.next((e) => e.event === "tenant")).data).toEqual({ type: "subscription", data: { planId: pro.id, status: "active" } });
    await new Promise((r) => setTimeout(r, 300));
    expect(theirs.events.filter((e) => e.event === "tenant")).toEqual([]);
  });
});

describe("realtime feed cost", () => {
  it("a write of an app nobody streams appends nothing to the feed; one with a stream, or within its lease, does", async () => {
    const rt = await realtimeBackend();
    const core = rt.t.backend.core;
    const other = await core.db.apps.findById((await rt.t.backend.admin.createApp({ name: "other" })).id);
    const otherTenant = await signupTenant(rt.t, { key: other!.publishableKey, appId: other!.id });
    const otherClient = clientFor(rt.t, rt.url, otherTenant);
    for (let i = 0; i < 5; i++) await rt.create("todos", { i });
    expect(await core.db.realtime.head()).toBe(0);
    const sse = await rt.open();
    await rt.ready(sse);
    await rt.create("todos", { i: 5 });
    await otherClient.create("todos", { i: 6 }); // another app: still nothing of it
    expect((await core.db.realtime.tail(0, 10)).map((c) => c.appId)).toEqual([rt.tenant.bearer.appId]);
    sse.close();
    await new Promise((r) => setTimeout(r, 100));
    await rt.create("todos", { i: 7 }); // within the lease after the stream closed: a resume would need it
    expect((await core.db.realtime.tail(0, 10)).map((c) => c.appId)).toEqual([rt.tenant.bearer.appId, rt.tenant.bearer.appId]);
  });
});

describe("realtime from a browser", () => {
  it("a ticket stream from another origin is allowed when the app lists the origin, 403 otherwise", async () => {
    const rt = await realtimeBackend();
    await rt.t.backend.admin.updateApp(rt.tenant.bearer.appId, { settings: { corsOrigins: ["https://app.example.com"] } });
    const ticket = async () => (await rt.call("POST", "/api/v1/realtime/ticket")).body.ticket as string;
    const allowed = await openSse(`${rt.url}/api/v1/realtime?ticket=${await ticket()}`, { origin: "https://app.example.com" });
    expect(allowed.status).toBe(200);
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    await allowed.next((e) => e.event === "ready");
    const refused = await openSse(`${rt.url}/api/v1/realtime?ticket=${await ticket()}`, { origin: "https://evil.example" });
    expect(refused.status).toBe(403);
    expect(refused.events[0]!.data.error).toBe("origin_not_allowed");
  });
});
