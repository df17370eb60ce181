import { describe, expect, it } from "vitest";
import { buildRequest, tempDir, toReply } from "./_helpers.ts";
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
  it("answers under the mount prefix, errors included, and keeps the parent's routes", async () => {
    const { parent, backend } = await createParentApp({ dataDir: tempDir(), logger: "silent" });
    try {
      const key = backend.defaultApp!.publishableKey;
      const signup = await toReply(await parent.fetch(buildRequest("http://localhost/tenantd", "POST", "/api/v1/auth/signup", { key, body: { email: "m@example.com", password: "a long password" } })));
      expect(signup.status).toBe(201);
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
