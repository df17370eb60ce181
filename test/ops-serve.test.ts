import { describe, expect, it } from "vitest";
import { request, Agent, type IncomingMessage } from "node:http";
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { tempDir, opaqueBytes } from "./_helpers.ts";
import { multipart } from "./files-helpers.ts";
import { serve, spawnCli, type Served } from "./_serve.ts";

const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

interface Answer {
  status: number;
  headers: IncomingMessage["headers"];
  body: any;
}

/** One request with node:http (so keep-alive sockets and partial bodies are in our hands). */
function send(url: string, opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; agent?: Agent | false } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: opts.method ?? "GET", headers: opts.headers, agent: opts.agent }, (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on("error", reject);
    req.end(opts.body);
  });
}

async function signup(s: Served, email = "ops@example.com"): Promise<{ accessToken: string; appId: string; key: string }> {
  const key = /publishable key:\s+(\S+)/.exec(s.stdout())![1]!;
  const appId = /app id:\s+(\S+)/.exec(s.stdout())![1]!;
  const res = await send(`${s.url}/api/v1/auth/signup`, { method: "POST", headers: { "x-service-key": key, "content-type": "application/json" }, body: JSON.stringify({ email, password: "a long password" }) });
  expect(res.status).toBe(201);
  return { accessToken: res.body.accessToken, appId, key };
}

/**
 * Starts a multipart upload of `size` bytes and sends the first megabyte; `finish()` sends
 * the rest and resolves with the answer.
 */
async function startUpload(s: Served, auth: { accessToken: string; appId: string }, size: number) {
  const data = opaqueBytes(size);
  const body = Buffer.from(multipart([{ filename: "big.bin", type: "application/octet-stream", data }]));
  let answer: Promise<Answer>;
  const req = request(`${s.url}/api/v1/files/upload`, {
    method: "POST",
    headers: { authorization: `Bearer ${auth.accessToken}`, "x-service-app": auth.appId, "content-type": "multipart/form-data; boundary=----tenantdTestBoundary7MA4YWxkTrZu0gW", "content-length": String(body.length) },
    agent: new Agent({ keepAlive: false }),
  });
  answer = new Promise<Answer>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: text ? JSON.parse(text) : undefined }));
    });
    req.on("error", reject);
  });
  const first = 1024 * 1024;
  await new Promise<void>((resolve) => req.write(body.subarray(0, first), () => resolve()));
  // A round trip on another connection: by its answer, the server has taken the upload's headers.
  expect((await send(`${s.url}/api/v1/health`)).status).toBe(200);
  return { data, answer, finish: () => (req.end(body.subarray(first)), answer), abandon: () => (answer.catch(() => {}), req.destroy()) };
}

describe("tenantd serve in production shape", () => {
  it("health and ready answer as documented, with the request id echoed", async () => {
    const s = await serve(tempDir());
    const health = await send(`${s.url}/api/v1/health`, { headers: { "x-request-id": "probe-1" } });
    expect(health).toMatchObject({ status: 200, body: { status: "ok", version } });
    expect(health.headers["x-request-id"]).toBe("probe-1");
    const ready = await send(`${s.url}/api/v1/health/ready`);
    expect(ready).toMatchObject({ status: 200, body: { status: "ready", version } });
    expect(ready.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    // A request id that could forge log lines is replaced, not echoed.
    const forged = await send(`${s.url}/api/v1/health`, { headers: { "x-request-id": "two words <script>" } });
    expect(forged.headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/);
    // Probes need no key and show no secrets.
    expect(JSON.stringify(health.body)).not.toMatch(/pk_|sk_|key/);
  });

  it("SIGTERM during a 5 MB upload: the upload finishes with 201, new requests get 503 + connection: close, ready is 503, the process prints stopped and exits 0", async () => {
    const dataDir = tempDir();
    const s = await serve(dataDir, ["--drain-timeout-ms", "60000"]);
    const auth = await signup(s);
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await send(`${s.url}/api/v1/health/ready`, { agent: keepAlive })).status).toBe(200);
    const upload = await startUpload(s, auth, 5 * 1024 * 1024);

    s.child.kill("SIGTERM");
    await s.waitFor(/SIGTERM: draining/);
    // A new request on the open keep-alive connection: refused, and told to close.
    const during = await send(`${s.url}/api/v1/health/ready`, { agent: keepAlive });
    expect(during.status).toBe(503);
    expect(during.body).toMatchObject({ error: "unavailable", message: expect.stringContaining("shutting down") });
    expect(during.headers.connection).toBe("close");
    // New connections are no longer accepted.
    await expect(send(`${s.url}/api/v1/health`, { agent: false })).rejects.toThrow(/ECONNREFUSED|ECONNRESET/);

    const done = await upload.finish();
    expect(done.status).toBe(201);
    expect(done.body.file.sizeBytes).toBe(5 * 1024 * 1024);
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.stdout()).toMatch(/^stopped$/m);
    // The database was closed cleanly: the WAL is checkpointed into the main file.
    const wal = join(dataDir, "tenantd.db-wal");
    expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);

    // The upload is really there after a restart.
    const again = await serve(dataDir);
    const got = await fetch(done.body.file.url.replace(/^https?:\/\/[^/]+/, again.url));
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(upload.data)).toBe(true);
  });

  it("a second SIGINT stops at once, without waiting for the request in flight", async () => {
    const s = await serve(tempDir(), ["--drain-timeout-ms", "600000"]);
    const auth = await signup(s);
    const upload = await startUpload(s, auth, 3 * 1024 * 1024);
    void upload.answer.catch(() => {});
    s.child.kill("SIGINT");
    await s.waitFor(/SIGINT: draining/);
    s.child.kill("SIGINT");
    expect(await s.exited).toEqual({ code: 1, signal: null });
    expect(s.stdout()).toContain("SIGINT again: stopping now");
    expect(s.stdout()).not.toMatch(/^stopped$/m);
    upload.abandon();
  });

  it("the drain is bounded: a stalled request does not hold the stop past --drain-timeout-ms", async () => {
    const s = await serve(tempDir(), ["--drain-timeout-ms", "300"]);
    const auth = await signup(s);
    const upload = await startUpload(s, auth, 3 * 1024 * 1024);
    void upload.answer.catch(() => {});
    s.child.kill("SIGTERM");
    expect(await s.exited).toEqual({ code: 0, signal: null });
    expect(s.stdout()).toMatch(/^stopped$/m);
    expect(s.stderr()).toContain("drain timeout passed with requests still in flight");
    upload.abandon();
  });

  it("--log-format json: every line parses, access lines carry route pattern, status, app and the request id", async () => {
    const s = await serve(tempDir(), ["--log-format", "json"]);
    const auth = await signup(s);
    const created = await send(`${s.url}/api/v1/data/notes`, {
      method: "POST",
      headers: { authorization: `Bearer ${auth.accessToken}`, "x-service-app": auth.appId, "content-type": "application/json", "x-request-id": "req-42" },
      body: JSON.stringify({ data: { text: "hi" } }),
    });
    expect(created.status).toBe(201);
    expect(created.headers["x-request-id"]).toBe("req-42");
    const missing = await send(`${s.url}/api/v1/data/notes/${created.body.record.id}x`, { headers: { authorization: `Bearer ${auth.accessToken}`, "x-service-app": auth.appId } });
    expect(missing.status).toBe(404);
    const generated = missing.headers["x-request-id"] as string;
    await s.waitFor(new RegExp(generated), "stderr");

    const lines = s.stderr().trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    for (const l of lines) expect(l).toMatchObject({ time: expect.any(String), level: expect.stringMatching(/^(debug|info|warn|error)$/), msg: expect.any(String) });
    expect(lines).toContainEqual(expect.objectContaining({ msg: "request", method: "POST", route: "/api/v1/data/:collection", status: 201, appId: auth.appId, requestId: "req-42", ms: expect.any(Number) }));
    expect(lines).toContainEqual(expect.objectContaining({ msg: "request", method: "GET", route: "/api/v1/data/:collection/:id", status: 404, requestId: generated }));
    // The signup's outbox line belongs to its request, too.
    const signupLine = lines.find((l) => l.msg === "request" && l.route === "/api/v1/auth/signup")!;
    expect(lines.find((l) => String(l.msg).startsWith("email (outbox)"))?.requestId).toBe(signupLine.requestId);
    // Raw paths with ids never appear as the route.
    expect(lines.some((l) => String(l.route ?? "").includes("rec_"))).toBe(false);
  });

  it("--no-access-log turns the request lines off; --log-level warn keeps only warnings and errors", async () => {
    const s = await serve(tempDir(), ["--no-access-log", "--log-format", "json"]);
    await signup(s);
    await s.waitFor(/email \(outbox\)/, "stderr");
    expect(s.stderr()).not.toContain('"msg":"request"');
    const quiet = await serve(tempDir(), ["--log-level", "warn"]);
    await signup(quiet);
    expect((await send(`${quiet.url}/api/v1/health`)).status).toBe(200);
    expect(quiet.stderr()).toBe("");
  });

  it("development logs the outbox link (the point of the outbox); production never logs a token-bearing link", async () => {
    const dev = await serve(tempDir());
    await signup(dev);
    await dev.waitFor(/email \(outbox\)/, "stderr");
    expect(dev.stderr()).toMatch(/verify-email[^"\s]*token=[A-Za-z0-9_-]{16,}/);

    const prod = await serve(tempDir(), ["--production"], { TENANTD_EMAIL_TRANSPORT: "outbox" });
    expect(prod.stdout()).toContain("mode: production");
    expect(prod.stdout()).not.toContain("billing: apps without Stripe keys use the development provider");
    await signup(prod);
    await prod.waitFor(/email \(outbox\)/, "stderr");
    expect(prod.stderr()).not.toMatch(/token=[A-Za-z0-9_-]{8,}/);
    expect(prod.stderr()).not.toContain("verify-email");
  });

  it.each([
    ["--production", ["--production"], {}],
    ["NODE_ENV=production", [], { NODE_ENV: "production" }],
  ])("production (%s) without SMTP refuses to start, saying how to configure mail or choose the outbox", async (_name, flags, env) => {
    const run = spawnCli(["serve", "--port", "0", "--data-dir", tempDir(), ...flags], env);
    expect((await run.exited).code).toBe(1);
    expect(run.stderr()).toContain("production mode needs a way to send email");
    expect(run.stderr()).toContain("TENANTD_SMTP_HOST");
    expect(run.stderr()).toContain("TENANTD_EMAIL_TRANSPORT=outbox");
    expect(run.stdout()).not.toContain("listening");
  });

  it("warns when links would point at an address clients cannot reach", async () => {
    const s = await serve(tempDir(), ["--host", "0.0.0.0"]);
    expect(s.stdout()).toContain("warning: links will point at http://0.0.0.0:");
    expect(s.stdout()).toContain("--public-url");
  });

  it("npx tenantd serve starts with no setup: default port from PORT, data directory ./.tenantd", async () => {
    const cwd = tempDir();
    const s = spawnCli(["serve"], { PORT: "0" }, cwd);
    await s.waitFor(/publishable key/);
    expect(s.stdout()).toContain(`data directory: ${join(cwd, ".tenantd")}`);
    // The banner names the store and where file blobs go.
    const store = /^store: (.*)$/m.exec(s.stdout())?.[1];
    expect([`SQLite, ${join(cwd, ".tenantd", "tenantd.db")}`, "PostgreSQL"]).toContain(store?.startsWith("PostgreSQL, ") ? "PostgreSQL" : store);
    expect(s.stdout()).toContain(`files: ${join(cwd, ".tenantd", "files")}\n`);
    expect(s.stdout()).toContain("mode: development");
    // The banner tells a person about the new default app once; no log line repeats it.
    await s.waitFor(/developer create/);
    const key = /publishable key:\s+(\S+)/.exec(s.stdout())![1]!;
    expect(s.stdout().split(key).length - 1 + s.stderr().split(key).length - 1).toBe(2); // the key line and the curl line
    const url = /listening on (\S+)/.exec(s.stdout())![1]!;
    expect((await send(`${url}/api/v1/health`)).status).toBe(200);
  });
});
