import { describe, expect, it } from "vitest";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { verifyWebhook } from "../src/webhooks/verify.ts";
import { buildOpenApiDocument } from "../src/openapi/document.ts";
import { developerSession, signupTenant, startBackend } from "./_helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";

/** Three real deliveries from tenantd to a receiver on loopback (two tenant events and the test event), and the signing secret. */
async function realDeliveries() {
  const t = await startBackend({ webhooks: { allowInsecure: true } });
  const developer = await developerSession(t);
  const receiver = await startReceiver();
  const secret = await configureWebhook(t, developer, receiver.url);
  const tenant = await signupTenant(t);
  await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
  expect((await t.request("POST", "/api/v1/auth/resend-verification", { bearer: tenant.bearer, body: {} })).status).toBe(200);
  expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: tenant.bearer })).status).toBe(200);
  expect((await t.request("POST", `/api/v1/admin/apps/${t.app.id}/event-webhook-config/test`, { developer })).status).toBe(202);
  await finishedDeliveries(t, developer, 3);
  expect(receiver.received).toHaveLength(3);
  return { t, secret, tenant, received: receiver.received };
}

describe("verifyWebhook (tenantd/webhooks)", () => {
  it("verifies real deliveries and refuses a one-byte change, a wrong secret, and a timestamp 301 s old", async () => {
    const { secret, tenant, received, t } = await realDeliveries();
    const sentAt = (h: Record<string, unknown>) => Number(h["x-service-timestamp"]) * 1000;
    const events = [];
    for (const r of received) {
      const result = await verifyWebhook(r.raw, r.headers, secret, { now: t.clock() });
      if (!result.ok) throw new Error(result.message);
      expect(result.signature).toMatch(/^[0-9a-f]{64}$/);
      events.push(result.event);
    }
    // Each body is what the OpenAPI document's `webhooks` entry for its event describes.
    const ajv = new Ajv2020({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ ...buildOpenApiDocument(), $id: "tenantd" });
    for (const e of events) {
      const validate = ajv.getSchema(`tenantd#/webhooks/${e.event}/post/requestBody/content/application~1json/schema`)!;
      expect(validate(e), JSON.stringify(validate.errors)).toBe(true);
    }
    expect(events.map((e) => [e.event, e.tenantId, e.email]).sort()).toEqual([
      ["tenant.deleted", tenant.id, tenant.email],
      ["tenant.email.resend_verification", tenant.id, tenant.email],
      ["webhook.test", null, null],
    ]);

    const [r] = received;
    const now = sentAt(r!.headers);
    // A string body and a Fetch Headers object work the same as bytes and Node's headers.
    const headers = new Headers(Object.entries(r!.headers).map(([k, v]): [string, string] => [k, String(v)]));
    expect((await verifyWebhook(r!.raw.toString("utf8"), headers, secret, { now })).ok).toBe(true);

    for (let i = 0; i < r!.raw.length; i += Math.ceil(r!.raw.length / 7)) {
      const changed = Buffer.from(r!.raw);
      changed[i] = changed[i]! ^ 0x01;
      expect(await verifyWebhook(changed, r!.headers, secret, { now })).toMatchObject({ ok: false, error: "bad_signature" });
    }
    expect(await verifyWebhook(r!.raw, r!.headers, `${secret}x`, { now })).toMatchObject({ ok: false, error: "bad_signature" });
    expect(await verifyWebhook(r!.raw, r!.headers, "whsec_other", { now })).toMatchObject({ ok: false, error: "bad_signature" });

    expect((await verifyWebhook(r!.raw, r!.headers, secret, { now: now + 300_000 })).ok).toBe(true);
    expect(await verifyWebhook(r!.raw, r!.headers, secret, { now: now + 301_000 })).toMatchObject({ ok: false, error: "stale_timestamp" });
    expect(await verifyWebhook(r!.raw, r!.headers, secret, { now: new Date(now - 301_000) })).toMatchObject({ ok: false, error: "stale_timestamp" });
    expect((await verifyWebhook(r!.raw, r!.headers, secret, { now: now + 301_000, toleranceSeconds: 600 })).ok).toBe(true);
  });

  it("refuses missing, malformed and contradictory headers with their own codes", async () => {
    const { secret, received, t } = await realDeliveries();
    const r = received[0]!;
    const signature = String(r.headers["x-service-signature"]);
    const now = t.clock();
    const cases: [Record<string, string>, string][] = [
      [{}, "missing_signature"],
      [{ "x-service-signature": "sha256=abc" }, "malformed_signature"],
      [{ "x-service-signature": signature.replace(/v1=[0-9a-f]+/, "v1=zz") }, "malformed_signature"],
      [{ "x-service-signature": signature, "x-service-timestamp": "1" }, "timestamp_mismatch"],
    ];
    for (const [headers, error] of cases) expect(await verifyWebhook(r.raw, headers, secret, { now })).toMatchObject({ ok: false, error });
  });
});
