import { describe, expect, it } from "vitest";
import express from "express";
import type { AddressInfo } from "node:net";
import { createTenantBackend, toNodeHandler } from "../src/index.ts";
import { buildRequest, TEST_ARGON2, tempDir, toReply } from "./_helpers.ts";
import { start as startStandalone } from "../examples/standalone/server.mjs";
import { start as startNodeHttp } from "../examples/node-http/server.mjs";
import { start as startExpress } from "../examples/express/server.mjs";
import { createParentApp } from "../examples/h3-mount/server.mjs";

interface Started {
  url: string;
  backend: { defaultApp?: { publishableKey: string }; close(): Promise<void> };
  close(): Promise<void>;
}

// Each embedding answers a real signup and keeps the host's own routes working.
describe.each([
  ["standalone", startStandalone, "", null],
  ["node:http", startNodeHttp, "", "/health"],
  ["express", startExpress, "", "/hello"],
] as const)("example %s", (_name, start, prefix, hostRoute) => {
  it("serves tenantd over real HTTP beside the host's routes", async () => {
    const s = (await start({ port: 0, dataDir: tempDir(), logger: "silent" })) as Started;
    try {
      const key = s.backend.defaultApp!.publishableKey;
      const res = await toReply(await fetch(buildRequest(s.url + prefix, "POST", "/api/v1/auth/signup", { key, body: { email: "e@example.com", password: "a long password" } })));
      expect(res.status).toBe(201);
      expect(res.body.tenant.email).toBe("e@example.com");
      const missing = await toReply(await fetch(`${s.url}${prefix}/api/v1/no-such-route`));
      expect(missing.status).toBe(404);
      if (hostRoute) expect((await fetch(s.url + hostRoute)).status).toBe(200);
    } finally {
      await s.close();
    }
  });
});

describe("example h3-mount", () => {
  it("answers under the mount prefix, errors and file links included, and keeps the parent's routes", async () => {
    const logs: string[] = [];
    const logger = { info: () => {}, warn: (m: string) => logs.push(m), error: (m: string) => logs.push(m) };
    const { parent, backend } = await createParentApp({ port: 3000, dataDir: tempDir(), logger });
    try {
      const key = backend.defaultApp!.publishableKey;
      const signup = await toReply(await parent.fetch(buildRequest("http://localhost/tenantd", "POST", "/api/v1/auth/signup", { key, body: { email: "m@example.com", password: "a long password" } })));
      expect(signup.status).toBe(201);
      // A file's link goes through the prefix, and answers there.
      const form = new FormData();
      form.append("file", new Blob(["mounted bytes"], { type: "text/plain" }), "m.txt");
      const upload = await toReply(
        await parent.fetch(new Request("http://localhost/tenantd/api/v1/files/upload", { method: "POST", headers: { "x-service-app": backend.defaultApp!.id, authorization: `Bearer ${signup.body.accessToken}` }, body: form })),
      );
      expect(upload.status).toBe(201);
      const fileUrl = new URL(upload.body.file.url as string);
      expect(fileUrl.href.startsWith("http://localhost:3000/tenantd/")).toBe(true);
      expect(await (await parent.fetch(new Request(`http://localhost${fileUrl.pathname}`))).text()).toBe("mounted bytes");
      expect(logs).toEqual([]);
      const bad = await toReply(await parent.fetch(buildRequest("http://localhost/tenantd", "POST", "/api/v1/auth/login", { key, raw: "{", headers: { "content-type": "application/json" } })));
      expect(bad.body).toMatchObject({ error: "invalid_json" });
      const unknown = await toReply(await parent.fetch(new Request("http://localhost/tenantd/api/v1/nothing")));
      expect(unknown.body).toMatchObject({ error: "not_found" });
      expect(await (await parent.fetch(new Request("http://localhost/"))).json()).toEqual({ app: "parent" });
    } finally {
      await backend.close();
    }
  });
});

describe("a mounted backend whose links cannot be right", () => {
  it("warns once when publicUrl does not end with the mount prefix (h3 mount, Express under a path)", async () => {
    const h3Logs: string[] = [];
    const { parent, backend } = await createParentApp({ dataDir: tempDir(), publicUrl: "http://localhost:3000", logger: { info: () => {}, warn: (m: string) => h3Logs.push(m), error: () => {} } });
    try {
      await parent.fetch(new Request("http://localhost/tenantd/api/v1/health"));
      await parent.fetch(new Request("http://localhost/tenantd/api/v1/health"));
      expect(h3Logs.filter((l) => l.startsWith("tenantd is mounted under /tenantd, but publicUrl (http://localhost:3000) does not end with it"))).toHaveLength(1);
    } finally {
      await backend.close();
    }

    const expressLogs: string[] = [];
    const b = await createTenantBackend({ dataDir: tempDir(), publicUrl: "http://localhost:3000", argon2: TEST_ARGON2, logger: { info: () => {}, warn: (m: string) => expressLogs.push(m), error: () => {} } });
    const app = express();
    app.use("/backend", toNodeHandler(b));
    const server = app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await fetch(`${url}/backend/api/v1/health`)).status).toBe(200);
      expect(expressLogs.filter((l) => l.startsWith("tenantd is mounted under /backend, but publicUrl"))).toHaveLength(1);
    } finally {
      await new Promise((r) => server.close(r));
      await b.close();
    }
  });
});
