import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createReceiver } from "../examples/webhook-receiver/server.mjs";
import { verifyDelivery } from "../examples/webhook-receiver/verify.mjs";
import type { TenantdEvent } from "../examples/webhook-receiver/verify.mjs";
import { signEnvelope } from "../src/webhooks/sign.ts";
import { developerSession, signupTenant, startBackend } from "./_helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver, type Received } from "./_webhook-receiver.ts";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (closers.length) await closers.pop()!();
});

/** The example receiver on a free port, with handlers that record what they were given. */
async function startExample(secret: string, now: () => number) {
  const handled: TenantdEvent[] = [];
  const server = createReceiver({
    secret,
    now,
    handlers: {
      "tenant.deleted": (e) => void handled.push(e),
      "tenant.email.resend_verification": (e) => void handled.push(e),
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`;
  /** Posts captured bytes and headers again, as an attacker replaying a delivery would. */
  const post = (raw: Buffer, headers: Record<string, string>) =>
    fetch(url, { method: "POST", body: new Uint8Array(raw), headers }).then(async (r) => ({ status: r.status, body: await r.json() }));
  return { url, handled, post };
}

const headersOf = (r: Received) => ({
  "content-type": "application/json",
  "x-service-signature": String(r.headers["x-service-signature"]),
  "x-service-timestamp": String(r.headers["x-service-timestamp"]),
});

async function tenantdWith(url: string) {
  const t = await startBackend({ webhooks: { allowInsecure: true } });
  const developer = await developerSession(t);
  return { t, developer, secret: await configureWebhook(t, developer, url) };
}

describe("the example webhook receiver", () => {
  it("accepts real deliveries from tenantd and hands them to its handlers", async () => {
    const t = await startBackend({ webhooks: { allowInsecure: true } });
    const developer = await developerSession(t);
    // The secret comes with the first set; moving the URL to the receiver keeps it.
    const secret = await configureWebhook(t, developer, "http://127.0.0.1:9/placeholder");
    const example = await startExample(secret, () => t.clock());
    await configureWebhook(t, developer, example.url);

    const tenant = await signupTenant(t);
    expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer })).status).toBe(200);
    const [d] = await finishedDeliveries(t, developer, 1);
    expect(d).toMatchObject({ status: "delivered", statusCode: 200 });
    expect(example.handled).toEqual([
      { event: "tenant.deleted", timestamp: Math.floor(t.clock() / 1000), appId: t.app.id, tenantId: tenant.id, email: tenant.email, payload: { reason: "self_delete", locale: "en" } },
    ]);
  });

  it("refuses a replayed, tampered, stale or wrongly signed delivery captured from tenantd", async () => {
    const capture = await startReceiver();
    const { t, secret } = await tenantdWith(capture.url);
    const tenant = await signupTenant(t);
    await t.backend.admin.deleteTenant(t.app.id, tenant.id);
    await waitForCapture(capture.received, 1);
    const real = capture.received[0]!;

    const example = await startExample(secret, () => t.clock());
    expect(await example.post(real.raw, headersOf(real))).toEqual({ status: 200, body: { ok: true } });
    expect(await example.post(real.raw, headersOf(real))).toEqual({ status: 409, body: { error: "replayed" } });

    const tampered = Buffer.from(real.raw.toString("utf8").replace('"admin_delete"', '"self_delete"'));
    expect(await example.post(tampered, headersOf(real))).toEqual({ status: 401, body: { error: "bad_signature" } });
    expect(await example.post(real.raw, { ...headersOf(real), "x-service-timestamp": "1" })).toEqual({ status: 401, body: { error: "timestamp_mismatch" } });
    const { "x-service-signature": _, ...unsigned } = headersOf(real);
    expect(await example.post(real.raw, unsigned)).toEqual({ status: 401, body: { error: "missing_signature" } });

    const wrongSecret = await startExample("whsec_not_the_secret", () => t.clock());
    expect(await wrongSecret.post(real.raw, headersOf(real))).toEqual({ status: 401, body: { error: "bad_signature" } });
    expect(example.handled).toHaveLength(1);
  });

  it("enforces the 5-minute window either side", async () => {
    const capture = await startReceiver();
    const { t, secret } = await tenantdWith(capture.url);
    await t.backend.admin.deleteTenant(t.app.id, (await signupTenant(t)).id);
    await waitForCapture(capture.received, 1);
    const real = capture.received[0]!;
    const sent = t.clock();
    for (const [offsetSeconds, accepted] of [
      [-299, true],
      [299, true],
      [-301, false],
      [301, false],
    ] as const) {
      const verdict = verifyDelivery(real.raw, { signature: String(real.headers["x-service-signature"]), timestamp: String(real.headers["x-service-timestamp"]) }, { secret, now: () => sent + offsetSeconds * 1000 });
      expect(verdict.ok ? "accepted" : verdict.reason).toBe(accepted ? "accepted" : "stale_timestamp");
    }
  });

  it("answers 200 to an event it does not know and does not call a handler", async () => {
    const t = await startBackend();
    const example = await startExample("whsec_test", () => t.clock());
    const { body, headers } = signEnvelope("whsec_test", {
      event: "tenant.something_new",
      timestamp: Math.floor(t.clock() / 1000),
      appId: t.app.id,
      tenantId: null,
      email: null,
      payload: {},
    });
    expect(await example.post(body, headers)).toEqual({ status: 200, body: { ignored: true } });
    expect(example.handled).toEqual([]);
  });
});

async function waitForCapture(list: unknown[], n: number) {
  await vi.waitFor(() => expect(list.length).toBeGreaterThanOrEqual(n), { timeout: 5000, interval: 10 });
}
