import { describe, expect, it } from "vitest";
import express from "express";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { request as httpRequest } from "node:http";
import { serve as serveFetch } from "srvx";
import Fastify from "fastify";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createTenantBackend, toFastifyHook, toNodeHandler, type FetchClient, type TenantBackend, type TenantBackendConfig } from "../src/index.ts";
import { buildRequest, TEST_ARGON2, tempDir } from "./_helpers.ts";
import type { Logger } from "../src/log.ts";

function captureLog() {
  const lines: string[] = [];
  const log: Logger = { info: (m) => lines.push(`info ${m}`), warn: (m) => lines.push(`warn ${m}`), error: (m) => lines.push(`error ${m}`) };
  return { lines, log };
}

async function listen(app: express.Express): Promise<{ url: string; server: Server }> {
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

/** An Express app as people write them: a JSON parser first, tenantd, then the app's own routes. */
async function expressHost(configure: (app: express.Express, backend: TenantBackend) => void, logger: Logger | "silent" = "silent") {
  const backend = await createTenantBackend({ dataDir: tempDir(), logger, argon2: TEST_ARGON2, publicUrl: "http://localhost:1" });
  const app = express();
  configure(app, backend);
  const { url, server } = await listen(app);
  const key = backend.defaultApp!.publishableKey;
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url + path, { method: "POST", headers: { "x-service-key": key, "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return {
    url,
    backend,
    post,
    close: async () => {
      await new Promise((r) => server.close(r));
      await backend.close();
    },
  };
}

describe("embedding in Express", () => {
  it("uses the body express.json() already read, and leaves the host's routes and body to it", async () => {
    const h = await expressHost((app, backend) => {
      app.use(express.json());
      app.use(toNodeHandler(backend));
      app.get("/", (_req, res) => res.send("host home"));
      app.post("/echo", (req, res) => res.json({ got: req.body }));
    });
    try {
      const signup = await h.post("/api/v1/auth/signup", { email: "a@example.com", password: "a long password" });
      expect(signup.status).toBe(201);
      // The body's own checks still apply to a host-parsed body.
      const typo = await h.post("/api/v1/auth/login", { email: "a@example.com", pasword: "x" });
      expect(typo.status).toBe(400);
      expect(await typo.json()).toMatchObject({ error: "invalid_request", message: expect.stringContaining("body.pasword is not a known field") });
      const echo = await h.post("/echo", { n: 1 });
      expect(await echo.json()).toEqual({ got: { n: 1 } });
      expect(await (await fetch(h.url + "/")).text()).toBe("host home");
      const unknown = await fetch(h.url + "/api/v1/nothing-here");
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ error: "not_found" });
      // An unmatched path outside tenantd's is the host's (Express's own 404 page).
      const hostMissing = await fetch(h.url + "/nope");
      expect(hostMissing.status).toBe(404);
      expect(hostMissing.headers.get("content-type")).toMatch(/text\/html/);
    } finally {
      await h.close();
    }
  });

  it("refuses an upload a host middleware already consumed, naming the fix to the client and in the log", async () => {
    const logs = captureLog();
    const h = await expressHost((app, backend) => {
      app.use(express.raw({ type: "multipart/form-data" }));
      app.use(toNodeHandler(backend));
    }, logs.log);
    try {
      const signup = (await (await h.post("/api/v1/auth/signup", { email: "u@example.com", password: "a long password" })).json()) as { accessToken: string };
      const form = new FormData();
      form.append("file", new Blob(["hello"], { type: "text/plain" }), "a.txt");
      const res = await fetch(h.url + "/api/v1/files/upload", {
        method: "POST",
        headers: { "x-service-app": h.backend.defaultApp!.id, authorization: `Bearer ${signup.accessToken}` },
        body: form,
      });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: "internal_error", message: expect.stringContaining("Mount tenantd before body parsers: app.use(toNodeHandler(backend)) above app.use(express.json())") });
      expect(logs.lines.filter((l) => l.startsWith("error POST /api/v1/files/upload: tenantd cannot read this request body"))).toHaveLength(1);
    } finally {
      await h.close();
    }
  });
});

describe("embedding in Express as the README shows it", () => {
  it("keeps tenantd's body limit and error bodies when mounted before express.json(), and the host's parser for its own routes", async () => {
    const h = await expressHost((app, backend) => {
      app.use(toNodeHandler(backend));
      app.use(express.json());
      app.post("/echo", (req, res) => res.json({ got: req.body }));
    });
    try {
      const { accessToken } = (await (await h.post("/api/v1/auth/signup", { email: "r@example.com", password: "a long password" })).json()) as { accessToken: string };
      const auth = { "x-service-app": h.backend.defaultApp!.id, authorization: `Bearer ${accessToken}` };
      // 150 kB: over express.json()'s 100 kB default, well under tenantd's maxJsonBytes.
      const big = await h.post("/api/v1/data/notes", { data: { text: "x".repeat(150_000) } }, auth);
      expect(big.status).toBe(201);
      const malformed = await fetch(h.url + "/api/v1/auth/login", { method: "POST", headers: { "x-service-key": h.backend.defaultApp!.publishableKey, "content-type": "application/json" }, body: "{" });
      expect(malformed.status).toBe(400);
      expect(await malformed.json()).toMatchObject({ error: "invalid_json" });
      expect(await (await h.post("/echo", { n: 2 })).json()).toEqual({ got: { n: 2 } });
    } finally {
      await h.close();
    }
  });
});

describe("embedding in Fastify", () => {
  it("answers tenantd's routes from an onRequest hook, uploads and JSON alike, and leaves the rest to Fastify", async () => {
    const backend = await createTenantBackend({ dataDir: tempDir(), logger: "silent", argon2: TEST_ARGON2, publicUrl: "http://localhost:1" });
    const app = Fastify();
    app.addHook("onRequest", toFastifyHook(backend));
    app.get("/hello", async () => ({ hello: "world" }));
    app.post("/echo", async (request) => ({ got: request.body }));
    const url = await app.listen({ port: 0, host: "127.0.0.1" });
    try {
      const key = backend.defaultApp!.publishableKey;
      const signup = await fetch(buildRequest(url, "POST", "/api/v1/auth/signup", { key, body: { email: "f@example.com", password: "a long password" } }));
      expect(signup.status).toBe(201);
      const { accessToken } = (await signup.json()) as { accessToken: string };
      const form = new FormData();
      form.append("file", new Blob(["hello fastify"], { type: "text/plain" }), "a.txt");
      const upload = await fetch(url + "/api/v1/files/upload", { method: "POST", headers: { "x-service-app": backend.defaultApp!.id, authorization: `Bearer ${accessToken}` }, body: form });
      expect(upload.status).toBe(201);
      const malformed = await fetch(buildRequest(url, "POST", "/api/v1/auth/login", { key, raw: "{", headers: { "content-type": "application/json" } }));
      expect(await malformed.json()).toMatchObject({ error: "invalid_json" });
      const unknown = await fetch(url + "/api/v1/nothing-here");
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject({ error: "not_found" });

      expect(await (await fetch(url + "/hello")).json()).toEqual({ hello: "world" });
      const echo = await fetch(url + "/echo", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 3 }) });
      expect(await echo.json()).toEqual({ got: { n: 3 } });
      // A path that is neither tenantd's nor the app's gets Fastify's own 404.
      expect(await (await fetch(url + "/nope")).json()).toMatchObject({ statusCode: 404, error: "Not Found" });
    } finally {
      await app.close();
      await backend.close();
    }
  });
});

describe("start-up messages of the library", () => {
  it("logs the default app's id and key once, and warns when publicUrl is not set", async () => {
    const dataDir = tempDir();
    const first = captureLog();
    const a = await createTenantBackend({ dataDir, logger: first.log, argon2: TEST_ARGON2 });
    await a.close();
    expect(first.lines.filter((l) => l.includes(`app id ${a.defaultApp!.id}, publishable key ${a.defaultApp!.publishableKey}`))).toHaveLength(1);
    expect(first.lines.filter((l) => l.startsWith("warn publicUrl is not set"))).toHaveLength(1);

    const second = captureLog();
    const b = await createTenantBackend({ dataDir, logger: second.log, argon2: TEST_ARGON2, publicUrl: "https://api.example.com" });
    await b.close();
    expect(b.defaultApp).toBeUndefined();
    expect(second.lines.filter((l) => l.includes("publishable key") || l.includes("publicUrl"))).toEqual([]);
  });
});

describe("GET /", () => {
  it("says what the server is, its version and where docs and health are", async () => {
    const backend = await createTenantBackend({ dataDir: tempDir(), logger: "silent", argon2: TEST_ARGON2 });
    try {
      const res = await backend.fetch(new Request("http://localhost/"));
      expect(res.status).toBe(200);
      const { version } = (await import("../package.json", { with: { type: "json" } })).default;
      expect(await res.json()).toMatchObject({ name: "tenantd", version, health: "/api/v1/health", ready: "/api/v1/health/ready", docs: expect.stringMatching(/^https:\/\//) });
      const html = await backend.fetch(new Request("http://localhost/", { headers: { accept: "text/html,application/xhtml+xml" } }));
      expect(html.headers.get("content-type")).toMatch(/text\/html/);
      expect(await html.text()).toContain(`<h1>tenantd ${version}</h1>`);
    } finally {
      await backend.close();
    }
  });
});

describe("the root route beside the 404/405 fallback", () => {
  it("leaves other paths ending in a slash to the 404, and answers POST / with 405", async () => {
    const backend = await createTenantBackend({ dataDir: tempDir(), logger: "silent", argon2: TEST_ARGON2 });
    try {
      const post = await backend.fetch(new Request("http://localhost/api/v1/nothing/", { method: "DELETE" }));
      expect(post.status).toBe(404);
      const root = await backend.fetch(new Request("http://localhost/", { method: "POST" }));
      expect(root.status).toBe(405);
      expect(root.headers.get("allow")).toContain("GET");
    } finally {
      await backend.close();
    }
  });
});

describe("backend.fetch under a fetch runtime", () => {
  /** A backend that allows 3 sign-in attempts per client address a minute. */
  async function limited() {
    const logs = captureLog();
    const backend = await createTenantBackend({ dataDir: tempDir(), logger: logs.log, argon2: TEST_ARGON2, publicUrl: "http://localhost:1", rateLimit: { perIp: 3, perEmail: 100 } });
    const key = backend.defaultApp!.publishableKey;
    const login = (i: number) => buildRequest("http://localhost", "POST", "/api/v1/auth/login", { key, body: { email: `nobody${i}@example.com`, password: "not the password" } });
    return { backend, logs, login };
  }

  it("counts each client by the address the host gives, explicitly or in its own shape", async () => {
    const { backend, logs, login } = await limited();
    try {
      const statuses = async (client: FetchClient) => {
        const out: number[] = [];
        for (let i = 0; i < 4; i++) out.push((await backend.fetch(login(i), client)).status);
        return out;
      };
      expect(await statuses({ ip: "203.0.113.1" })).toEqual([401, 401, 401, 429]);
      // Another client is not refused for the first one's attempts, whichever host shape names it.
      expect(await statuses({ ip: "203.0.113.2" })).toEqual([401, 401, 401, 429]);
      expect(await statuses({ remoteAddr: { hostname: "203.0.113.3" } })).toEqual([401, 401, 401, 429]); // Deno.serve
      expect(await statuses({ incoming: { socket: { remoteAddress: "203.0.113.4" } } })).toEqual([401, 401, 401, 429]); // @hono/node-server's env
      expect(await statuses({ requestIP: () => ({ address: "203.0.113.5" }) })).toEqual([401, 401, 401, 429]); // Bun.serve's server
      expect(logs.lines.filter((l) => l.includes("without the client's address"))).toEqual([]);
    } finally {
      await backend.close();
    }
  });

  it("keeps clients apart when served by srvx as is, and warns once when no address is known", async () => {
    const { backend, logs, login } = await limited();
    const server = serveFetch({ fetch: backend.fetch, port: 0, hostname: "127.0.0.1", silent: true });
    try {
      await server.ready();
      // Two clients: the same loopback server reached from two local addresses.
      const from = (localAddress: string, i: number) =>
        new Promise<number>((resolve, reject) => {
          const req = login(i);
          void req.text().then((body) => {
            const r = httpRequest(`${server.url}api/v1/auth/login`, { method: "POST", localAddress, headers: Object.fromEntries(req.headers) }, (res) => {
              res.resume();
              resolve(res.statusCode!);
            });
            r.on("error", reject);
            r.end(body);
          });
        });
      const first: number[] = [];
      for (let i = 0; i < 4; i++) first.push(await from("127.0.0.2", i));
      expect(first).toEqual([401, 401, 401, 429]);
      expect(await from("127.0.0.3", 0)).toBe(401);
      expect(logs.lines.filter((l) => l.includes("without the client's address"))).toEqual([]);

      // A host that gives nothing: all such requests share one counter, and the log says why, once.
      await backend.fetch(login(0));
      await backend.fetch(login(1));
      expect(logs.lines.filter((l) => l.includes("without the client's address"))).toEqual([
        expect.stringMatching(/^warn backend\.fetch got a request without the client's address.*backend\.fetch\(request, \{ ip \}\)/),
      ]);
    } finally {
      await server.close(true);
      await backend.close();
    }
  });
});

describe("docs/embedding.md: production mode in a host app", () => {
  it("NODE_ENV=production needs mail settings, and each of the two lines the page gives satisfies it", async () => {
    const doc = readFileSync(join(import.meta.dirname, "..", "docs", "embedding.md"), "utf8");
    const section = doc.slice(doc.indexOf("## Production mode in a host app"));
    const lines = [...section.matchAll(/```js\n(email: [^\n]*),\n```/g)].map((m) => m[1]!);
    expect(lines).toHaveLength(2);
    const saved = process.env.NODE_ENV;
    process.env.NODE_ENV = "production";
    try {
      await expect(createTenantBackend({ dataDir: tempDir(), logger: "silent", argon2: TEST_ARGON2, publicUrl: "https://api.example.com" })).rejects.toThrow(/production mode needs a way to send email/);
      for (const line of lines) {
        const options = new Function("process", `return { ${line} };`)({ env: { SMTP_PASS: "secret" } }) as TenantBackendConfig;
        const backend = await createTenantBackend({ dataDir: tempDir(), logger: "silent", argon2: TEST_ARGON2, publicUrl: "https://api.example.com", ...options });
        expect(backend.core.config.mode).toBe("production");
        await backend.close();
      }
    } finally {
      if (saved === undefined) delete process.env.NODE_ENV;
      else process.env.NODE_ENV = saved;
    }
  });
});
