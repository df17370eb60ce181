import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startNodes, type Cluster, type Node } from "./_nodes.ts";
import { openSse, type SseEvent } from "./_sse.ts";

/**
 * Realtime across three `tenantd serve` processes on one PostgreSQL database: a stream on
 * one node, subscriptions and writes sent to the others, a node killed under a stream and
 * the client resuming on another node. PostgreSQL only by nature (the nodes share it), so
 * it runs once, in the postgres project.
 */

let cluster: Cluster;
let A: Node, B: Node, C: Node;
let key: string;
let appId: string;
let developer: string;

interface Tenant {
  bearer: { accessToken: string; appId: string };
  refreshToken: string;
  headers: Record<string, string>;
}

let seq = 0;
async function signup(): Promise<Tenant> {
  const res = await call(A, "POST", "/api/v1/auth/signup", { key, body: { email: `rt${++seq}-${Date.now().toString(36)}@example.com`, password: "a long password" } });
  expect(res.status, res.text).toBe(201);
  const bearer = { accessToken: res.body.accessToken as string, appId };
  return { bearer, refreshToken: res.body.refreshToken, headers: { authorization: `Bearer ${bearer.accessToken}`, "x-service-app": appId } };
}

const recordEvent = (e: SseEvent) => ["created", "updated", "deleted", "left"].includes(e.event);

beforeAll(async () => {
  // No grace for a reused refresh token: its second use ends the session at once.
  cluster = await startNodes(3, { TENANTD_REFRESH_REUSE_GRACE_SECONDS: "0" });
  [A, B, C] = cluster.nodes as [Node, Node, Node];
  const created = cluster.cli(["developer", "create", "--email", "dev@example.com", "--password", "developer password"]);
  expect(created.status, created.stderr).toBe(0);
  const login = await call(A, "POST", "/api/v1/developer/login", { body: { email: "dev@example.com", password: "developer password" } });
  developer = login.body.token;
  const apps = await call(B, "GET", "/api/v1/admin/apps", { developer });
  appId = apps.body.apps[0].id;
  key = apps.body.apps[0].publishableKey;
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
});

describe("realtime across nodes", () => {
  it("a stream on B, subscribed through A: writes on A and C reach it, in order, each once", async () => {
    const t = await signup();
    const sse = await openSse(`${B.url}/api/v1/realtime`, t.headers);
    const stream = (await sse.next((e) => e.event === "ready")).data.stream;
    const sub = await call(A, "POST", "/api/v1/realtime/subscriptions", { bearer: t.bearer, body: { stream, collection: "notes", filter: { open: true } } });
    expect(sub.status, sub.text).toBe(201);
    const ids: string[] = [];
    for (const [i, node] of [A, C, A, C, B, A].entries()) {
      const res = await call(node, "POST", "/api/v1/data/notes", { bearer: t.bearer, body: { data: { i, open: i % 3 !== 2 } } });
      expect(res.status, res.text).toBe(201);
      if (i % 3 !== 2) ids.push(res.body.record.id);
    }
    const events = await sse.collect(ids.length, recordEvent, 10_000);
    expect(events.map((e) => e.data.id)).toEqual(ids);
    await new Promise((r) => setTimeout(r, 1200));
    expect(sse.events.filter(recordEvent)).toHaveLength(ids.length);
    // Another tenant cannot reach the stream through any node.
    const other = await signup();
    const refused = await call(C, "POST", "/api/v1/realtime/subscriptions", { bearer: other.bearer, body: { stream, collection: "notes" } });
    expect(refused.status, refused.text).toBe(404);
    expect(refused.body.error).toBe("not_found");
  }, 60_000);

  it("a logout on A ends the stream on C within 1 s", async () => {
    const t = await signup();
    const sse = await openSse(`${C.url}/api/v1/realtime`, t.headers);
    await sse.next((e) => e.event === "ready");
    const started = Date.now();
    const out = await call(A, "POST", "/api/v1/auth/logout", { bearer: t.bearer, body: { refreshToken: t.refreshToken } });
    expect(out.status, out.text).toBeLessThan(300);
    await sse.ended;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(sse.events.at(-1)!.event).toBe("ended");
  }, 30_000);

  it("a password reset, a refresh-token reuse and an account deletion on one node end the streams on the others within 1 s", async () => {
    /** A stream of `t` on `node`, and how long after `since` it ended with `ended`. */
    const streamOn = async (node: Node, t: Tenant) => {
      const sse = await openSse(`${node.url}/api/v1/realtime`, t.headers);
      await sse.next((e) => e.event === "ready");
      return {
        async endedWithin(since: number) {
          await Promise.race([sse.ended, new Promise((r) => setTimeout(r, 3000))]);
          expect(sse.events.at(-1), JSON.stringify(sse.events.map((e) => e.event))).toMatchObject({ event: "ended", data: { reason: "session_ended" } });
          return Date.now() - since;
        },
      };
    };
    const secret = (await call(A, "POST", `/api/v1/admin/apps/${appId}/secret-key`, { developer })).body.secretKey as string;

    // Password reset (the server asks for the token, the user sends it from the email's link) on A.
    const reset = await signup();
    const email = (await call(B, "GET", "/api/v1/auth/me", { bearer: reset.bearer })).body.tenant.email as string;
    const onB = await streamOn(B, reset);
    const onC = await streamOn(C, reset);
    const asked = await call(B, "POST", "/api/v1/auth/request-password-reset", { key, headers: { "x-service-secret": secret }, body: { email, sendEmail: false } });
    expect(asked.status, asked.text).toBe(200);
    let started = Date.now();
    const done = await call(A, "POST", "/api/v1/auth/reset-password", { key, body: { token: asked.body.resetToken, password: "a brand new password" } });
    expect(done.body).toEqual({ ok: true });
    expect(await onB.endedWithin(started)).toBeLessThan(1000);
    expect(await onC.endedWithin(started)).toBeLessThan(1000);

    // A refresh token used twice (the second time on B, past the grace of 0 s): the session ends, and its stream on C.
    const reuse = await signup();
    const onC2 = await streamOn(C, reuse);
    expect((await call(A, "POST", "/api/v1/auth/refresh", { key, body: { refreshToken: reuse.refreshToken } })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    started = Date.now();
    expect((await call(B, "POST", "/api/v1/auth/refresh", { key, body: { refreshToken: reuse.refreshToken } })).status).toBe(401);
    expect(await onC2.endedWithin(started)).toBeLessThan(1000);

    // The account deleted on A: its stream on B ends.
    const gone = await signup();
    const onB3 = await streamOn(B, gone);
    started = Date.now();
    expect((await call(A, "POST", "/api/v1/tenants/me/delete", { bearer: gone.bearer })).body).toEqual({ ok: true, deleted: true });
    expect(await onB3.endedWithin(started)).toBeLessThan(1000);
  }, 60_000);

  it("the node under a stream is killed during writes: the client resumes on another node without loss or repeat", async () => {
    const t = await signup();
    const sse = await openSse(`${C.url}/api/v1/realtime`, t.headers);
    const stream = (await sse.next((e) => e.event === "ready")).data.stream;
    expect((await call(C, "POST", "/api/v1/realtime/subscriptions", { bearer: t.bearer, body: { stream, collection: "tasks" } })).status).toBe(201);
    const written: string[] = [];
    let stop = false;
    const writer = (async () => {
      for (let n = 0; !stop || n < 40; n++) {
        const res = await call(n % 2 ? A : B, "POST", "/api/v1/data/tasks", { bearer: t.bearer, body: { data: { n } } });
        expect(res.status, res.text).toBe(201);
        written.push(res.body.record.id);
      }
    })();
    await sse.collect(10, recordEvent, 10_000);
    C.child.kill("SIGKILL");
    await sse.ended;
    const position = sse.lastEventId;
    const seen = sse.events.filter(recordEvent).map((e) => e.data.id);
    // The client reconnects to B with its position, and follows the same collection again.
    const resumed = await openSse(`${B.url}/api/v1/realtime`, { ...t.headers, "last-event-id": position });
    const ready = await resumed.next((e) => e.event === "ready");
    expect(ready.data.resumed).toBe(true);
    expect((await call(A, "POST", "/api/v1/realtime/subscriptions", { bearer: t.bearer, body: { stream: ready.data.stream, subscriptions: [{ collection: "tasks" }] } })).status).toBe(201);
    stop = true;
    await writer;
    const rest = await resumed.collect(written.length - seen.length, recordEvent, 15_000);
    await new Promise((r) => setTimeout(r, 1200));
    const all = [...seen, ...resumed.events.filter(recordEvent).map((e) => e.data.id)];
    expect(all).toEqual(written);
    expect(rest.length).toBe(written.length - seen.length);
  }, 90_000);

  it("a developer's live view on B (the dashboard's records browser) gets a write made on A, and ends when the developer signs out on A", async () => {
    const t = await signup();
    const me = (await call(A, "GET", "/api/v1/auth/me", { bearer: t.bearer })).body.tenant.id as string;
    const dev = (await call(A, "POST", "/api/v1/developer/login", { body: { email: "dev@example.com", password: "developer password" } })).body.token as string;
    const live = await openSse(`${B.url}/api/v1/admin/apps/${appId}/tenants/${me}/records/notes/live`, { authorization: `Bearer ${dev}` });
    expect(live.status).toBe(200);
    await live.next((e) => e.event === "ready");
    const made = await call(A, "POST", "/api/v1/data/notes", { bearer: t.bearer, body: { data: { from: "A" } } });
    expect(await live.next(recordEvent, 10_000)).toMatchObject({ event: "created", data: { id: made.body.record.id, subscriptions: ["live"] } });
    expect((await call(A, "POST", "/api/v1/developer/logout", { developer: dev })).status).toBeLessThan(300);
    expect((await live.next((e) => e.event === "ended", 3000)).data.reason).toBe("session_ended");
  }, 60_000);
});
