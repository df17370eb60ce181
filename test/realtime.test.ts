import { describe, expect, it } from "vitest";
import { expectError, serveHttp, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { openSse, type SseClient } from "./_sse.ts";
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
