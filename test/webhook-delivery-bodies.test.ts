import { describe, expect, it } from "vitest";
import { verifyWebhook } from "../src/webhooks/verify.ts";
import { pruneDeliveries } from "../src/webhooks/retention.ts";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";
import { runCli } from "./_cli.ts";
import { storeRows } from "./_store.ts";

const insecure = { webhooks: { allowInsecure: true } };
const DAY = 24 * 3600_000;
const deliveryPath = (appId: string, id: string) => `/api/v1/admin/apps/${appId}/webhook-deliveries/${id}`;

/** A fresh developer session (sessions expire while the test clock runs weeks ahead). */
async function login(t: TestBackend, email: string): Promise<string> {
  const res = await t.request("POST", "/api/v1/developer/login", { body: { email, password: "developer password" } });
  expect(res.status, res.text).toBe(200);
  return res.body.token as string;
}

/** Deletes a tenant as the app owner through the admin API (fires tenant.deleted, reason admin_delete). */
async function adminDelete(t: TestBackend, developer: string, tenantId: string) {
  const res = await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/tenants/${tenantId}`, { developer });
  expect(res.status, res.text).toBe(204);
}

describe("a delivery's stored body", () => {
  it("is byte-identical to what the receiver got and verifies with the signature header it got", async () => {
    const t = await startBackend(insecure);
    const developer = await developerSession(t);
    const rx = await startReceiver();
    const secret = await configureWebhook(t, developer, rx.url);
    const tenant = await signupTenant(t, { email: "op+body@example.com" });
    await adminDelete(t, developer, tenant.id);
    const [logged] = await finishedDeliveries(t, developer, 1);
    expect(rx.received).toHaveLength(1);
    const got = rx.received[0]!;

    const res = await t.request("GET", deliveryPath(t.app.id, logged!.id), { developer });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ ...logged, body: expect.any(String), bodyNote: null });
    expect(Buffer.from(res.body.body as string, "utf8").equals(got.raw)).toBe(true);

    // An operator re-checks the signature the receiver got against the stored text.
    const now = t.clock();
    const verified = await verifyWebhook(res.body.body, got.headers, secret, { now });
    expect(verified).toMatchObject({ ok: true, event: { event: "tenant.deleted", tenantId: tenant.id, email: "op+body@example.com", payload: { reason: "admin_delete" } } });
    expect(await verifyWebhook(`${res.body.body} `, got.headers, secret, { now })).toMatchObject({ ok: false, error: "bad_signature" });

    // At rest the body is sealed: the tenant's email does not sit in the log in plain text.
    const dump = JSON.stringify(await storeRows(t.backend).all("SELECT * FROM webhook_deliveries"));
    expect(dump).toMatch(/enc:v1:/);
    expect(dump).not.toContain("body@example.com");
  });

  it("is kept for a failed delivery and for one logged invalid_config", async () => {
    const t = await startBackend(insecure);
    const developer = await developerSession(t);
    const rx = await startReceiver((_req, res) => {
      res.statusCode = 503;
      res.end("down for maintenance");
    });
    const first = await signupTenant(t, { email: "first@example.com" });
    const second = await signupTenant(t, { email: "second@example.com" });

    // No URL yet: logged invalid_config, with the body it would have sent.
    await adminDelete(t, developer, first.id);
    const [missed] = await finishedDeliveries(t, developer, 1);
    expect(missed).toMatchObject({ status: "invalid_config" });
    const missedBody = (await t.request("GET", deliveryPath(t.app.id, missed!.id), { developer })).body;
    expect(JSON.parse(missedBody.body)).toEqual({
      event: "tenant.deleted",
      timestamp: Math.floor(t.clock() / 1000),
      appId: t.app.id,
      tenantId: first.id,
      email: "first@example.com",
      payload: { reason: "admin_delete", locale: "en" },
    });

    await configureWebhook(t, developer, rx.url);
    await adminDelete(t, developer, second.id);
    const [failed] = await finishedDeliveries(t, developer, 2);
    expect(failed).toMatchObject({ status: "failed", statusCode: 503, tenantId: second.id });
    const failedBody = (await t.request("GET", deliveryPath(t.app.id, failed!.id), { developer })).body;
    expect(failedBody.body).toBe(rx.received[0]!.raw.toString("utf8"));
    expect(failedBody.bodyNote).toBeNull();
  });

  it("is another developer's 404, an unknown id's 404, and needs a session", async () => {
    const t = await startBackend(insecure);
    const developer = await developerSession(t);
    const tenant = await signupTenant(t);
    await adminDelete(t, developer, tenant.id);
    const [d] = await finishedDeliveries(t, developer, 1);

    const stranger = await developerSession(t);
    const own = await t.request("POST", "/api/v1/admin/apps", { developer: stranger, body: { name: "Stranger's app" } });
    expect(own.status, own.text).toBe(201);
    expectError(await t.request("GET", deliveryPath(t.app.id, d!.id), { developer: stranger }), 404, "not_found");
    // The id alone does not open it from an app the stranger does own.
    expectError(await t.request("GET", deliveryPath(own.body.app.id, d!.id), { developer: stranger }), 404, "not_found");
    expectError(await t.request("GET", deliveryPath(t.app.id, d!.id), {}), 401, "unauthorized");
    const unknown = await t.request("GET", deliveryPath(t.app.id, "evt_missing"), { developer });
    expectError(unknown, 404, "not_found");
    expect(unknown.body.message).toContain("webhook-deliveries");
  });

  it("is dropped after 30 days and the delivery after 90, by the hourly maintenance", async () => {
    const t = await startBackend(insecure);
    let developer = await developerSession(t, "keeper@example.com");
    const tenant = await signupTenant(t);
    await adminDelete(t, developer, tenant.id);
    const [d] = await finishedDeliveries(t, developer, 1);
    const core = t.backend.core;

    t.clock.advance(29 * DAY);
    developer = await login(t, "keeper@example.com");
    expect(await pruneDeliveries(core)).toEqual({ bodies: 0, rows: 0 });
    expect((await t.request("GET", deliveryPath(t.app.id, d!.id), { developer })).body.body).toEqual(expect.any(String));

    t.clock.advance(2 * DAY);
    developer = await login(t, "keeper@example.com");
    expect(await pruneDeliveries(core)).toEqual({ bodies: 1, rows: 0 });
    const aged = await t.request("GET", deliveryPath(t.app.id, d!.id), { developer });
    expect(aged.body).toMatchObject({ status: "invalid_config", body: null, bodyNote: "Bodies are kept for 30 days; this one has been removed." });

    t.clock.advance(60 * DAY);
    developer = await login(t, "keeper@example.com");
    expect(await pruneDeliveries(core)).toEqual({ bodies: 0, rows: 1 });
    expectError(await t.request("GET", deliveryPath(t.app.id, d!.id), { developer }), 404, "not_found");
    expect((await t.request("GET", `/api/v1/admin/apps/${t.app.id}/webhook-deliveries`, { developer })).body.total).toBe(0);
  });

  it("is printed by `tenantd webhook delivery`, and an unknown id names the command that lists them", async () => {
    const t = await startBackend(insecure);
    const developer = await developerSession(t);
    const rx = await startReceiver();
    await configureWebhook(t, developer, rx.url);
    const tenant = await signupTenant(t);
    await adminDelete(t, developer, tenant.id);
    const [d] = await finishedDeliveries(t, developer, 1);
    const dir = ["--data-dir", t.dataDir, "--app", t.app.id];

    const json = await runCli(["webhook", "delivery", ...dir, "--id", d!.id, "--json"]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ id: d!.id, status: "delivered", body: rx.received[0]!.raw.toString("utf8"), bodyNote: null });
    const text = await runCli(["webhook", "delivery", ...dir, "--id", d!.id]);
    expect(text.stdout.trimEnd().split("\n").at(-1)).toBe(rx.received[0]!.raw.toString("utf8"));

    const missing = await runCli(["webhook", "delivery", ...dir, "--id", "evt_missing"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("No delivery evt_missing in this app's log");
    expect(missing.stderr).toContain("list them with: tenantd webhook deliveries --app <app>");
  });
});
