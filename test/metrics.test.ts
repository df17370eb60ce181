import { describe, expect, it } from "vitest";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { mailerFor } from "../src/email/mailer.ts";
import { enqueueEvent } from "../src/webhooks/events.ts";
import { ConfigError } from "../src/config.ts";
import { createTenantBackend } from "../src/index.ts";
import { serveHttp, signupTenant, startBackend, tempDir } from "./_helpers.ts";

const TOKEN = "metrics-token-0123456789";

/** The value of the sample line (`name{labels} value`) that starts with `prefix` and holds `also`, if any. */
function sample(text: string, prefix: string, ...also: string[]): number | undefined {
  const line = text.split("\n").find((l) => l.startsWith(prefix) && also.every((part) => l.includes(part)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

/** A loopback port nothing listens on. */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

describe("GET /metrics", () => {
  it("is not there by default: 404, as any unknown path", async () => {
    const t = await startBackend();
    const { url } = await serveHttp(t.backend);
    const res = await fetch(`${url}/metrics`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: "not_found" });
    expect(t.backend.metrics).toBeUndefined();
  });

  it("with a token: 401 without it or with another one, the Prometheus text with it", async () => {
    const t = await startBackend({ metrics: { token: TOKEN } });
    const { url } = await serveHttp(t.backend);
    for (const authorization of [undefined, "Bearer not-the-metrics-token", `Basic ${TOKEN}`]) {
      const res = await fetch(`${url}/metrics`, { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: "unauthorized", message: expect.stringContaining("metrics token") });
    }
    const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  });

  it("counts requests and their latency by route pattern and status, never by raw path", async () => {
    const t = await startBackend({ metrics: { token: TOKEN } });
    const { url } = await serveHttp(t.backend);
    const tenant = await signupTenant(t);
    const bearer = { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id };
    for (const id of ["rec_a", "rec_b", "rec_c"]) expect((await fetch(`${url}/api/v1/data/notes/${id}`, { headers: bearer })).status).toBe(404);
    expect((await fetch(`${url}/no/such/path`)).status).toBe(404);
    const text = await (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();

    expect(sample(text, 'tenantd_http_request_duration_seconds_count{method="GET",route="/api/v1/data/:collection/:id",status="404"}')).toBe(3);
    expect(sample(text, 'tenantd_http_request_duration_seconds_count{method="POST",route="/api/v1/auth/signup",status="201"}')).toBe(1);
    expect(sample(text, 'tenantd_http_request_duration_seconds_count{method="GET",route="(no route)",status="404"}')).toBe(1);
    expect(sample(text, "tenantd_http_request_duration_seconds_bucket{", 'le="+Inf"', 'method="GET",route="/api/v1/data/:collection/:id",status="404"')).toBe(3);
    expect(text).not.toContain("rec_a");
    expect(text).not.toContain("/no/such/path");
    // The database's share, by operation; the event loop's lag; what is in flight now (this request).
    expect(sample(text, 'tenantd_db_operation_duration_seconds_count{operation="tenants.')).toBeGreaterThan(0);
    expect(sample(text, "nodejs_eventloop_lag_seconds ")).toBeGreaterThanOrEqual(0);
    expect(sample(text, "tenantd_http_requests_in_flight ")).toBe(1);
    expect(sample(text, "tenantd_db_operations_in_flight ")).toBe(0);
    expect(sample(text, 'tenantd_db_pool_max{engine="')).toBeGreaterThanOrEqual(1);
  });

  it("counts failed webhook deliveries and emails, and shows both queues", async () => {
    const closed = await closedPort();
    const t = await startBackend({
      metrics: { token: TOKEN },
      webhooks: { allowInsecure: true },
      email: { transport: "smtp", smtp: { host: "127.0.0.1", port: closed, ignoreTLS: true } },
    });
    const { url } = await serveHttp(t.backend);
    const scrape = async () => (await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();
    expect(sample(await scrape(), "tenantd_webhook_queue_depth ")).toBe(0);

    await t.backend.admin.setWebhookUrl(t.app.id, `http://127.0.0.1:${closed}/hook`);
    await enqueueEvent(t.backend.core, { appId: t.app.id, event: "tenant.deleted", tenantId: "ten_x", email: "gone@example.com", payload: { reason: "self_delete" } });
    await signupTenant(t);
    await mailerFor(t.backend.core).idle();
    let text = await scrape();
    for (let i = 0; i < 100 && sample(text, 'tenantd_webhook_deliveries_total{outcome="failed"}') === undefined; i++) {
      await new Promise((r) => setTimeout(r, 20));
      text = await scrape();
    }
    expect(sample(text, 'tenantd_webhook_deliveries_total{outcome="failed"}')).toBe(1);
    expect(sample(text, "tenantd_webhook_queue_depth ")).toBe(0);
    expect(sample(text, 'tenantd_emails_total{outcome="failed"}')).toBe(1);
    expect(sample(text, "tenantd_email_queue_depth ")).toBe(0);
  });

  it("on a port of its own: served there (token optional), 404 on the main port", async () => {
    const t = await startBackend({ metrics: { port: 0 } });
    const { url } = await serveHttp(t.backend);
    expect((await fetch(`${url}/metrics`)).status).toBe(404);
    const own = t.backend.metrics!.url;
    expect(own).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
    expect((await fetch(`${url}/api/v1/health`)).status).toBe(200);
    const res = await fetch(own);
    expect(res.status).toBe(200);
    expect(sample(await res.text(), 'tenantd_http_request_duration_seconds_count{method="GET",route="/api/v1/health",status="200"}')).toBe(1);
    expect((await fetch(own.replace(/\/metrics$/, "/other"))).status).toBe(404);

    const guarded = await startBackend({ metrics: { port: 0, token: TOKEN } });
    expect((await fetch(guarded.backend.metrics!.url)).status).toBe(401);
    expect((await fetch(guarded.backend.metrics!.url, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it("refuses to start on the main port without a token, and takes its settings from the environment", async () => {
    await expect(createTenantBackend({ dataDir: tempDir(), logger: "silent", metrics: true })).rejects.toThrow(ConfigError);
    await expect(createTenantBackend({ dataDir: tempDir(), logger: "silent", metrics: true })).rejects.toThrow(/metrics\.token .*or metrics\.port/);

    process.env.TENANTD_METRICS_TOKEN = TOKEN;
    try {
      const t = await startBackend();
      const { url } = await serveHttp(t.backend);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    } finally {
      delete process.env.TENANTD_METRICS_TOKEN;
    }
    // metrics: false wins over a token from the environment.
    process.env.TENANTD_METRICS_TOKEN = TOKEN;
    try {
      const t = await startBackend({ metrics: false });
      expect(t.backend.metrics).toBeUndefined();
    } finally {
      delete process.env.TENANTD_METRICS_TOKEN;
    }
  });
});
