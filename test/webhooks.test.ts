import { createHmac } from "node:crypto";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { createCore } from "../src/core.ts";
import { developerSession, expectError, signupTenant, startBackend, tempDir, testClock, TEST_ARGON2, type TestBackend } from "./_helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver, type Received } from "./_webhook-receiver.ts";
import { storeRows } from "./_store.ts";
import { testStoreConfig } from "./_postgres.ts";

const insecure = { webhooks: { allowInsecure: true } };
const configPath = (appId: string) => `/api/v1/admin/apps/${appId}/event-webhook-config`;

/** The independent check a receiver makes: HMAC-SHA256 over `{t}.{raw bytes}`. */
function signatureValid(r: Received, secret: string, raw = r.raw): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers["x-service-signature"]));
  if (!m) return false;
  const expected = createHmac("sha256", secret).update(Buffer.concat([Buffer.from(`${m[1]}.`), raw])).digest("hex");
  return expected === m[2];
}

/** Raises tenant.email.resend_verification the way the auth area's admin action does. */
async function emitResend(t: TestBackend, tenantId: string, token = "vt_example") {
  const core = t.backend.core;
  const app = (await core.db.apps.findById(t.app.id))!;
  const tenant = (await core.db.tenants.findById(t.app.id, tenantId))!;
  await core.hooks.emit("tenant.verificationResent", {
    app,
    tenant,
    verifyToken: token,
    verifyUrl: `https://app.example.com/verify?token=${token}`,
    expiresAt: Date.UTC(2026, 0, 16, 12, 0, 0),
  });
}

async function setup(config = insecure, answer?: Parameters<typeof startReceiver>[0]) {
  const t = await startBackend(config);
  const developer = await developerSession(t);
  const rx = await startReceiver(answer);
  const tenant = await signupTenant(t);
  return { t, developer, rx, tenant };
}

describe("webhook configuration", () => {
  it("returns the signing secret once: on the first set, never on GET or on a later set", async () => {
    const { t, developer, rx } = await setup();
    const first = await t.request("PUT", configPath(t.app.id), { developer, body: { url: rx.url } });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      url: rx.url,
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
      secretCreatedAt: "2026-01-15T12:00:00.000Z",
      createdAt: "2026-01-15T12:00:00.000Z",
      updatedAt: "2026-01-15T12:00:00.000Z",
    });

    t.clock.advance(60_000);
    const got = await t.request("GET", configPath(t.app.id), { developer });
    expect(got.body).toEqual({ url: rx.url, secretCreatedAt: "2026-01-15T12:00:00.000Z", createdAt: "2026-01-15T12:00:00.000Z", updatedAt: "2026-01-15T12:00:00.000Z" });
    expect(got.text).not.toContain(first.body.secret);

    const moved = await t.request("PUT", configPath(t.app.id), { developer, body: { url: `${rx.url}&v=2` } });
    expect(moved.body).toMatchObject({ url: `${rx.url}&v=2`, secret: null, secretCreatedAt: "2026-01-15T12:00:00.000Z", updatedAt: "2026-01-15T12:01:00.000Z" });

    // The kept secret still signs.
    const tenant = await signupTenant(t);
    await emitResend(t, tenant.id);
    await finishedDeliveries(t, developer, 1);
    expect(rx.received[0]!.path).toBe("/hooks/tenantd?src=test&v=2");
    expect(signatureValid(rx.received[0]!, first.body.secret)).toBe(true);
  });

  it("stores the secret sealed, not in plain text", async () => {
    const { t, developer, rx } = await setup();
    const secret = await configureWebhook(t, developer, rx.url);
    const [row] = await storeRows(t.backend).all<{ secret_sealed: string }>("SELECT secret_sealed FROM webhook_configs WHERE app_id = ?", t.app.id);
    expect(row!.secret_sealed).toMatch(/^enc:v2:/);
    expect(row!.secret_sealed).not.toContain(secret);
  });

  it.each([
    ["plain http", { url: "http://hooks.example.com/in" }, /https/],
    ["not a URL", { url: "hooks.example.com/in" }, /body\.url/],
    ["missing url", {}, /body\.url/],
    ["credentials in the URL", { url: "https://user:pw@hooks.example.com/in" }, /user name or password/],
    ["loopback literal", { url: "https://127.0.0.1:8443/in" }, /loopback/],
    ["private literal", { url: "https://10.1.2.3/in" }, /private/],
    ["link-local literal (cloud metadata)", { url: "https://169.254.169.254/latest" }, /link-local/],
    ["IPv6 loopback literal", { url: "https://[::1]:8443/in" }, /loopback/],
    ["another scheme", { url: "ftp://hooks.example.com/in" }, /https/],
  ])("refuses %s with 400 at config time", async (_name, body, message) => {
    const t = await startBackend();
    const developer = await developerSession(t);
    const res = await t.request("PUT", configPath(t.app.id), { developer, body });
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toMatch(message);
    expect((await t.request("GET", configPath(t.app.id), { developer })).body.url).toBeNull();
  });

  it("rotating needs a URL first, and DELETE removes the endpoint", async () => {
    const { t, developer, rx } = await setup();
    expectError(await t.request("POST", `${configPath(t.app.id)}/rotate-secret`, { developer }), 404, "not_found");
    await configureWebhook(t, developer, rx.url);
    const del = await t.request("DELETE", configPath(t.app.id), { developer });
    expect(del.status).toBe(204);
    expect((await t.request("GET", configPath(t.app.id), { developer })).body).toEqual({ url: null, secretCreatedAt: null, createdAt: null, updatedAt: null });
  });

  it("answers 404 for another developer's app and 401 without a session", async () => {
    const { t, developer, rx } = await setup();
    await configureWebhook(t, developer, rx.url);
    const stranger = await developerSession(t);
    const calls: [string, string, unknown?][] = [
      ["PUT", configPath(t.app.id), { url: "https://evil.example.com/x" }],
      ["GET", configPath(t.app.id)],
      ["DELETE", configPath(t.app.id)],
      ["POST", `${configPath(t.app.id)}/rotate-secret`],
      ["GET", `/api/v1/admin/apps/${t.app.id}/webhook-deliveries`],
    ];
    for (const [method, path, body] of calls) {
      expectError(await t.request(method, path, { developer: stranger, body }), 404, "not_found");
      expectError(await t.request(method, path, { body }), 401, "unauthorized");
    }
    expect((await t.request("GET", configPath(t.app.id), { developer })).body.url).toBe(rx.url);
  });
});

describe("deliveries", () => {
  it("sends one POST whose body, headers and signature are exact", async () => {
    const { t, developer, rx, tenant } = await setup();
    const secret = await configureWebhook(t, developer, rx.url);
    await emitResend(t, tenant.id, "vt_123");
    const [logged] = await finishedDeliveries(t, developer, 1);

    expect(rx.received).toHaveLength(1);
    const r = rx.received[0]!;
    const ts = Math.floor(t.clock() / 1000);
    expect(r.raw.toString("utf8")).toBe(
      JSON.stringify({
        event: "tenant.email.resend_verification",
        timestamp: ts,
        appId: t.app.id,
        tenantId: tenant.id,
        email: tenant.email,
        payload: { verifyToken: "vt_123", verifyUrl: "https://app.example.com/verify?token=vt_123", expiresAt: "2026-01-16T12:00:00.000Z" },
      }),
    );
    expect({ method: r.method, path: r.path }).toEqual({ method: "POST", path: "/hooks/tenantd?src=test" });
    expect(r.headers).toMatchObject({
      "content-type": "application/json",
      "content-length": String(r.raw.length),
      "user-agent": "tenantd/1.0",
      "x-service-timestamp": String(ts),
      "x-service-signature": expect.stringMatching(new RegExp(`^t=${ts},v1=[0-9a-f]{64}$`)),
    });
    expect(signatureValid(r, secret)).toBe(true);
    const tampered = Buffer.from(r.raw);
    const at = tampered.length - 3;
    tampered.writeUInt8(tampered.readUInt8(at) ^ 1, at);
    expect(signatureValid(r, secret, tampered)).toBe(false);

    expect(logged).toEqual({
      id: expect.stringMatching(/^evt_/),
      event: "tenant.email.resend_verification",
      tenantId: tenant.id,
      status: "delivered",
      url: rx.url,
      statusCode: 200,
      error: null,
      durationMs: expect.any(Number),
      createdAt: "2026-01-15T12:00:00.000Z",
      finishedAt: "2026-01-15T12:00:00.000Z",
    });
    // The verification token left the queue with the event; the log does not keep it.
    const dump = JSON.stringify(await storeRows(t.backend).all("SELECT * FROM webhook_deliveries"));
    expect(dump).not.toContain("vt_123");
  });

  it("signs with the rotated secret at once; the old one no longer verifies", async () => {
    const { t, developer, rx, tenant } = await setup();
    const old = await configureWebhook(t, developer, rx.url);
    t.clock.advance(1000);
    const rotated = await t.request("POST", `${configPath(t.app.id)}/rotate-secret`, { developer });
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ url: rx.url, secret: expect.stringMatching(/^whsec_/), secretCreatedAt: "2026-01-15T12:00:01.000Z" });
    expect(rotated.body.secret).not.toBe(old);
    expect((await t.request("GET", configPath(t.app.id), { developer })).text).not.toContain(rotated.body.secret);

    await emitResend(t, tenant.id);
    await finishedDeliveries(t, developer, 1);
    expect(signatureValid(rx.received[0]!, rotated.body.secret)).toBe(true);
    expect(signatureValid(rx.received[0]!, old)).toBe(false);
  });

  it.each([
    [200, "delivered", null],
    [204, "delivered", null],
    [302, "delivered", null],
    [404, "failed", /answered 404/],
    [500, "failed", /answered 500/],
  ])("a receiver answering %i is logged %s", async (status, expected, error) => {
    const { t, developer, rx, tenant } = await setup(insecure, (_req, res) => {
      res.writeHead(status, status === 302 ? { location: "https://elsewhere.example.com/" } : {});
      res.end();
    });
    await configureWebhook(t, developer, rx.url);
    await emitResend(t, tenant.id);
    const [d] = await finishedDeliveries(t, developer, 1);
    expect(d).toMatchObject({ status: expected, statusCode: status });
    if (error) expect(d!.error).toMatch(error);
    else expect(d!.error).toBeNull();
    expect(rx.received).toHaveLength(1);
  });

  it("cuts a receiver that hangs at the timeout, logs it failed, and never delays the API call", async () => {
    const order: string[] = [];
    const { t, developer, rx, tenant } = await setup(insecure, (_req, res) => {
      order.push("receiver got the request");
      const late = setTimeout(() => res.end("too late"), 5000);
      res.on("close", () => {
        clearTimeout(late);
        order.push(res.writableFinished ? "receiver answered" : "receiver was cut off");
      });
    });
    await configureWebhook(t, developer, rx.url);
    const res = await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer });
    order.push("API answered");
    expect(res.status).toBe(200);

    const [d] = await finishedDeliveries(t, developer, 1);
    expect(d).toMatchObject({ status: "failed", statusCode: null, error: "timeout: no answer within 1500 ms", event: "tenant.deleted" });
    await vi.waitFor(() => expect(order).toHaveLength(3), { timeout: 5000, interval: 10 });
    // The delivery may start before the test reads the API's answer (its event is queued in the
    // same transaction); what must hold is that the API answered long before the cut-off.
    expect([...order].sort()).toEqual(["API answered", "receiver got the request", "receiver was cut off"]);
    expect(order.indexOf("API answered")).toBeLessThan(order.indexOf("receiver was cut off"));
    expect(order.indexOf("receiver got the request")).toBeLessThan(order.indexOf("receiver was cut off"));
  });

  it("connects to the address it vetted while Host still names the URL's host", async () => {
    const { t, developer, rx, tenant } = await setup();
    const port = new URL(rx.url).port;
    await configureWebhook(t, developer, `http://localhost:${port}/by-name`);
    await emitResend(t, tenant.id);
    const [d] = await finishedDeliveries(t, developer, 1);
    expect(d).toMatchObject({ status: "delivered", url: `http://localhost:${port}/by-name` });
    expect(rx.received[0]!.headers.host).toBe(`localhost:${port}`);
  });

  it("a receiver that is down is logged failed with the connection error", async () => {
    const { t, developer, tenant } = await setup();
    const closedPort = await freePort();
    await configureWebhook(t, developer, `http://127.0.0.1:${closedPort}/in`);
    await emitResend(t, tenant.id);
    const [d] = await finishedDeliveries(t, developer, 1);
    expect(d).toMatchObject({ status: "failed", statusCode: null, error: "connection failed: ECONNREFUSED" });
  });

  it("logs invalid_config when no URL is set, and sends nothing", async () => {
    const { t, developer, rx, tenant } = await setup();
    await emitResend(t, tenant.id);
    const [d] = await finishedDeliveries(t, developer, 1);
    expect(d).toMatchObject({ status: "invalid_config", url: null, statusCode: null, durationMs: null, error: "no webhook URL is configured for this app", event: "tenant.email.resend_verification" });
    expect(rx.received).toHaveLength(0);
  });

  it("the SSRF guard refuses a host that resolves to loopback without connecting", async () => {
    const t = await startBackend();
    const developer = await developerSession(t);
    const tenant = await signupTenant(t);
    let connections = 0;
    const tcp = createServer((socket) => {
      connections++;
      socket.destroy();
    });
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve));
    const port = (tcp.address() as AddressInfo).port;
    try {
      await configureWebhook(t, developer, `https://localhost:${port}/in`);
      await emitResend(t, tenant.id);
      const [d] = await finishedDeliveries(t, developer, 1);
      // The delivery log says the host is not public, never what it resolved to (review item 12).
      expect(d).toMatchObject({ status: "failed", statusCode: null, error: expect.stringContaining("refused: localhost is not a public address") });
      expect(d!.error).not.toContain("127.0.0.1");
      expect(connections).toBe(0);
    } finally {
      await new Promise((resolve) => tcp.close(resolve));
    }
  });

  it("the delivery log says the same of a host that does not resolve as of one that resolves to an internal address (issue 39)", async () => {
    const t = await startBackend();
    const developer = await developerSession(t);
    const tenant = await signupTenant(t);
    const errors: string[] = [];
    for (const host of ["no-such-host.invalid", "localhost"]) {
      await configureWebhook(t, developer, `https://${host}/in`);
      await emitResend(t, tenant.id, host);
      const deliveries = await finishedDeliveries(t, developer, errors.length + 1);
      errors.push(deliveries[0]!.error.replace(host, "HOST"));
    }
    expect(errors[0]).toBe(errors[1]);
    expect(errors[0]).toContain("refused: HOST is not a public address");
  });
});

describe("the delivery log", () => {
  it("pages newest first and validates limit and offset", async () => {
    const { t, developer, tenant } = await setup();
    for (const token of ["a", "b", "c"]) {
      await emitResend(t, tenant.id, token);
      t.clock.advance(1000);
    }
    await finishedDeliveries(t, developer, 3);
    const page = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/webhook-deliveries?limit=2`, { developer });
    expect(page.body).toMatchObject({ total: 3, queued: 0, limit: 2, offset: 0 });
    expect(page.body.deliveries.map((d: { createdAt: string }) => d.createdAt)).toEqual(["2026-01-15T12:00:02.000Z", "2026-01-15T12:00:01.000Z"]);
    const rest = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/webhook-deliveries?limit=2&offset=2`, { developer });
    expect(rest.body.deliveries.map((d: { createdAt: string }) => d.createdAt)).toEqual(["2026-01-15T12:00:00.000Z"]);
    for (const q of ["limit=0", "limit=1001", "limit=ten", "offset=-1"]) {
      const res = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/webhook-deliveries?${q}`, { developer });
      expectError(res, 400, "invalid_request");
      expect(res.body.message).toMatch(new RegExp(`^query\\.${q.split("=")[0]}`));
    }
  });

  it("counts deliveries in the developer's usage", async () => {
    const { t, developer, tenant } = await setup();
    await emitResend(t, tenant.id);
    await finishedDeliveries(t, developer, 1);
    const usage = await t.request("GET", "/api/v1/developer/usage", { developer });
    expect(JSON.stringify(usage.body)).toContain('"webhookDeliveriesThisMonth":1');
  });
});

describe("the queue across restarts", () => {
  async function login(t: TestBackend, email: string) {
    const res = await t.request("POST", "/api/v1/developer/login", { body: { email, password: "developer password" } });
    return res.body.token as string;
  }

  it("delivers an event queued before a stop exactly once after the restart", async () => {
    const dataDir = tempDir();
    const rx = await startReceiver();
    const first = await startBackend({ dataDir, ...insecure });
    await developerSession(first, "owner@example.com");
    await configureWebhook(first, await login(first, "owner@example.com"), rx.url);
    const tenant = await signupTenant(first);
    await first.backend.close();

    // A process that queued the event and stopped without sending it (as the CLI, which never
    // dispatches, or a server stopped right after the request that raised it).
    const stopped = await coreWithoutDispatcher(dataDir);
    const app = (await stopped.db.apps.findById(first.app.id))!;
    const row = (await stopped.db.tenants.findById(first.app.id, tenant.id))!;
    await stopped.hooks.emit("tenant.verificationResent", { app, tenant: row, verifyToken: "before-stop", verifyUrl: "https://app.example.com/verify?token=before-stop", expiresAt: Date.UTC(2026, 0, 16, 12, 0, 0) });
    await stopped.close();
    expect(rx.received).toHaveLength(0);

    const second = await startBackend({ dataDir, ...insecure });
    const [d] = await finishedDeliveries(second, await login(second, "owner@example.com"), 1);
    expect(d).toMatchObject({ status: "delivered", event: "tenant.email.resend_verification" });
    expect(rx.received.map((r) => JSON.parse(r.raw.toString()).payload.verifyToken)).toEqual(["before-stop"]);
    await second.backend.close();

    // A third start sends only what is new: the recorded delivery is not sent again.
    const third = await startBackend({ dataDir, ...insecure });
    await emitResend(third, tenant.id, "after-restart");
    await finishedDeliveries(third, await login(third, "owner@example.com"), 2);
    expect(rx.received.map((r) => JSON.parse(r.raw.toString()).payload.verifyToken)).toEqual(["before-stop", "after-restart"]);
  });

  it("an event claimed by a process that stopped mid-send is marked failed, never sent twice", async () => {
    const dataDir = tempDir();
    const rx = await startReceiver();
    const setupRun = await startBackend({ dataDir, ...insecure });
    await developerSession(setupRun, "owner@example.com");
    await configureWebhook(setupRun, await login(setupRun, "owner@example.com"), rx.url);
    const tenant = await signupTenant(setupRun);
    await setupRun.backend.close();

    // A process that claimed the event and died before recording the outcome.
    // On the same store as the backends (the same PostgreSQL database for this data directory).
    const crashed = await coreWithoutDispatcher(dataDir);
    const app = (await crashed.db.apps.findById(setupRun.app.id))!;
    await crashed.hooks.emit("tenant.deleted", { app, tenantId: tenant.id, email: tenant.email, locale: "en", reason: "admin_delete" });
    expect(await crashed.db.webhooks.claim(10, crashed.clock())).toHaveLength(1);
    await crashed.close();

    const next = await startBackend({ dataDir, ...insecure });
    next.clock.advance(62_000);
    const developer = await login(next, "owner@example.com");
    const [d] = await finishedDeliveries(next, developer, 1);
    expect(d).toMatchObject({ status: "failed", event: "tenant.deleted", error: "the server stopped while this delivery was in flight; it was not retried" });
    expect(rx.received).toHaveLength(0);
  });
});

/** A process on the backends' store that runs no webhook dispatcher (as the CLI). */
async function coreWithoutDispatcher(dataDir: string) {
  const core = createCore({ dataDir, logger: "silent", bootstrap: false, argon2: TEST_ARGON2, clock: testClock(), ...(await testStoreConfig(dataDir)).config });
  await core.ready;
  return core;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const port = (srv.address() as AddressInfo).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}
