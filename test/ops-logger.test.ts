import { describe, expect, it } from "vitest";
import { createTenantBackend, type TenantBackendConfig } from "../src/index.ts";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { mailerFor } from "../src/email/mailer.ts";
import { enqueueEvent } from "../src/webhooks/events.ts";
import { buildRequest, tempDir, TEST_ARGON2 } from "./_helpers.ts";

type Line = { level: string; message: string; fields?: Record<string, unknown> };

function recordingLogger() {
  const lines: Line[] = [];
  const at = (level: string) => (message: string, fields?: Record<string, unknown>) => lines.push({ level, message, fields });
  return { lines, logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } };
}

async function backend(config: TenantBackendConfig) {
  return createTenantBackend({ dataDir: tempDir(), argon2: TEST_ARGON2, rateLimit: false, publicUrl: "http://localhost:3000", ...config });
}

describe("a custom logger", () => {
  it("gets secrets redacted: secret-looking fields, nested ones, tokens inside links and bearer values", async () => {
    const { lines, logger } = recordingLogger();
    const b = await backend({ logger, email: { transport: "outbox" } });
    try {
      b.core.log.warn("calling https://hooks.example.com/x?token=abc123secret&page=2 with Bearer eyJhbGciOi.payload.sig", {
        password: "hunter2",
        smtp: { pass: "smtp-secret", host: "mail.example.com" },
        apiKey: "sk_live_123",
        url: "https://app.example.com/reset?resetToken=tok_999#x",
      });
      const line = lines.at(-1)!;
      const text = JSON.stringify(line);
      for (const secret of ["hunter2", "smtp-secret", "sk_live_123", "abc123secret", "tok_999", "payload.sig"]) expect(text).not.toContain(secret);
      expect(line.fields).toMatchObject({ password: "[redacted]", apiKey: "[redacted]", smtp: { pass: "[redacted]", host: "mail.example.com" } });
      expect(line.message).toContain("page=2");
    } finally {
      await b.close();
    }
  });

  it("in production, a signup's mail never puts its token in the custom logger; every line of a request carries its id", async () => {
    const { lines, logger } = recordingLogger();
    const b = await backend({ logger, mode: "production", email: { transport: "outbox" } });
    try {
      const res = await b.fetch(buildRequest("http://x", "POST", "/api/v1/auth/signup", { key: b.defaultApp!.publishableKey, body: { email: "p@example.com", password: "a long password" }, headers: { "x-request-id": "rid-7" } }));
      expect(res.status).toBe(201);
      expect(res.headers.get("x-request-id")).toBe("rid-7");
      await mailerFor(b.core).idle();
      const text = JSON.stringify(lines);
      expect(text).not.toMatch(/token=[A-Za-z0-9_-]{8,}/);
      expect(lines.find((l) => l.message.startsWith("email (outbox)"))?.fields?.requestId).toBe("rid-7");
      expect(lines).toContainEqual(expect.objectContaining({ level: "info", message: "request", fields: expect.objectContaining({ route: "/api/v1/auth/signup", status: 201, requestId: "rid-7" }) }));
    } finally {
      await b.close();
    }
  });

  it("quiet routes (bearer reads, record writes, refresh) carry the request id on their access line and on an error's line, also one that fails after an await", async () => {
    const { lines, logger } = recordingLogger();
    const b = await backend({ logger, email: { transport: "outbox" }, refreshReuseGraceSeconds: 0 });
    try {
      const key = b.defaultApp!.publishableKey;
      const signup = await (await b.fetch(buildRequest("http://x", "POST", "/api/v1/auth/signup", { key, body: { email: "q@example.com", password: "a long password" } }))).json();
      await mailerFor(b.core).idle();
      const call = (method: string, path: string, requestId: string, body?: unknown) =>
        b.fetch(buildRequest("http://x", method, path, { bearer: { accessToken: signup.accessToken, appId: b.defaultApp!.id }, body, headers: { "x-request-id": requestId } }));
      const lineOf = (requestId: string, message: string) => lines.find((l) => l.message === message && l.fields?.requestId === requestId);

      expect((await call("GET", "/api/v1/auth/me", "rid-me")).status).toBe(200);
      expect(lineOf("rid-me", "request")?.fields).toMatchObject({ route: "/api/v1/auth/me", status: 200 });

      const records = b.core.db.records as { get: unknown; insert: unknown };
      const { get, insert } = records;
      records.get = () => {
        throw new Error("disk on fire");
      };
      records.insert = async () => {
        await new Promise((r) => setTimeout(r, 5));
        throw new Error("disk still on fire");
      };
      try {
        expect((await call("GET", "/api/v1/data/notes/rec_1", "rid-get")).status).toBe(500);
        expect((await call("POST", "/api/v1/data/notes", "rid-create", { data: { n: 1 } })).status).toBe(500);
      } finally {
        Object.assign(records, { get, insert });
      }
      expect(String(lineOf("rid-get", "request failed")?.fields?.error)).toContain("disk on fire");
      expect(String(lineOf("rid-create", "request failed")?.fields?.error)).toContain("disk still on fire");
      expect(lineOf("rid-create", "request")?.fields).toMatchObject({ route: "/api/v1/data/:collection", status: 500 });

      // The refresh route's own line, a reuse warning written after awaits, carries it too.
      const refresh = (refreshToken: string, requestId: string) =>
        b.fetch(buildRequest("http://x", "POST", "/api/v1/auth/refresh", { key, body: { refreshToken }, headers: { "x-request-id": requestId } }));
      expect((await refresh(signup.refreshToken, "rid-refresh")).status).toBe(200);
      expect(lineOf("rid-refresh", "request")?.fields).toMatchObject({ route: "/api/v1/auth/refresh", status: 200 });
      await new Promise((r) => setTimeout(r, 5));
      const reuse = await refresh(signup.refreshToken, "rid-reuse");
      expect(reuse.status).toBe(401);
      expect(lineOf("rid-reuse", "refresh token reuse: session ended")).toMatchObject({ level: "warn" });
      expect(lineOf("rid-reuse", "request")?.fields).toMatchObject({ route: "/api/v1/auth/refresh", status: 401 });
    } finally {
      await b.close();
    }
  });

  it("failed webhook deliveries and email transport failures are warnings", async () => {
    const { lines, logger } = recordingLogger();
    const closed = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, "127.0.0.1", () => {
        const port = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(port));
      });
    });
    const b = await backend({ logger, webhooks: { allowInsecure: true }, email: { transport: "smtp", smtp: { host: "127.0.0.1", port: closed, ignoreTLS: true } } });
    try {
      const app = b.defaultApp!;
      await b.admin.setWebhookUrl(app.id, `http://127.0.0.1:${closed}/hook`);
      await enqueueEvent(b.core, { appId: app.id, event: "tenant.deleted", tenantId: "ten_x", email: "gone@example.com", payload: { reason: "self" } });
      const res = await b.fetch(buildRequest("http://x", "POST", "/api/v1/auth/signup", { key: app.publishableKey, body: { email: "w@example.com", password: "a long password" } }));
      expect(res.status).toBe(201);
      await mailerFor(b.core).idle();
      for (let i = 0; i < 100 && !lines.some((l) => l.message === "webhook delivery failed"); i++) await new Promise((r) => setTimeout(r, 20));
      expect(lines).toContainEqual(expect.objectContaining({ level: "warn", message: "webhook delivery failed", fields: expect.objectContaining({ event: "tenant.deleted", appId: app.id, outcome: "failed" }) }));
      expect(lines).toContainEqual(expect.objectContaining({ level: "warn", message: "email not sent", fields: expect.objectContaining({ to: "w@example.com", transport: "smtp" }) }));
    } finally {
      await b.close();
    }
  });

  it("close() drains like a stop signal: new requests get 503 + connection: close, ready answers 503", async () => {
    const b = await backend({ logger: "silent", email: { transport: "outbox" } });
    expect((await b.fetch(new Request("http://x/api/v1/health/ready"))).status).toBe(200);
    const closing = b.close();
    const during = await b.fetch(new Request("http://x/api/v1/health/ready"));
    expect(during.status).toBe(503);
    expect(during.headers.get("connection")).toBe("close");
    expect(await during.json()).toMatchObject({ error: "unavailable" });
    await closing;
    expect(b.lifecycle.state).toBe("stopped");
  });
});
