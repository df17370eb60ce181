import { Agent, request } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { afterThisTest, serveHttp, signupTenant, startBackend } from "./_helpers.ts";

interface Refusal {
  name: string;
  path: string;
  headers: Record<string, string>;
  /** bytes of body sent */
  size: number;
  /** send a content-length (else chunked) */
  declared: boolean;
  status: number;
  error: string;
  /** another refusal as good as the expected one */
  or?: { status: number; error: string };
}

interface Outcome {
  status?: number;
  error?: string;
  failure?: string;
}

/**
 * Sends one request with Node's http client, writing the body in 16 KiB pieces while the
 * answer may already be coming, and reads the answer to its end. Resolves with what the
 * client read, or with the socket error that kept it from reading it.
 */
function send(url: string, r: Refusal, agent: Agent | false): Promise<Outcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...r.headers };
    if (r.declared) headers["content-length"] = String(r.size);
    const req = request(`${url}${r.path}`, { method: "POST", headers, agent });
    let answered = false;
    let settled = false;
    const settle = (o: Outcome) => {
      if (settled) return;
      settled = true;
      resolve(o);
      // Answered before the body was all sent: the rest is never sent, as a client stops.
      if (!req.writableEnded) req.destroy();
    };
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => {
        try {
          const body = JSON.parse(text) as { error?: string; message?: unknown };
          settle(typeof body.message === "string" ? { status: res.statusCode, error: body.error } : { failure: `no message in ${text.slice(0, 200)}` });
        } catch {
          settle({ failure: `not JSON (${res.statusCode}): ${text.slice(0, 200)}` });
        }
      });
      res.on("error", (e) => settle({ failure: `reading the answer: ${e.message}` }));
    });
    req.on("error", (e) => {
      if (!answered) settle({ failure: e.message });
    });
    // An unfinished JSON string: whatever is sent of it, it is never a valid body. Written a
    // piece per turn of the event loop, as a client streaming from a file or a socket does:
    // each write is then a fresh one, made whatever has arrived on the socket since.
    const piece = Buffer.alloc(16 * 1024, 0x20);
    piece.write('{"email":"');
    let written = 0;
    const pump = () => {
      if (answered || req.destroyed) return;
      if (written >= r.size) return void req.end();
      const n = Math.min(piece.length, r.size - written);
      written += n;
      req.write(n === piece.length ? piece : piece.subarray(0, n));
      setImmediate(pump);
    };
    pump();
  });
}

describe("refusals under load", () => {
  it("many parallel refusals, small and large bodies, with and without keep-alive: every client reads the status and its { error, message } (issue 39 item 9)", async () => {
    const t = await startBackend({ maxJsonBytes: 64 * 1024 });
    const { url } = await serveHttp(t.backend);
    const tenant = await signupTenant(t);
    const key = { "x-service-key": t.app.publishableKey };
    const bearer = { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id };
    const login = "/api/v1/auth/login";
    const kinds: Refusal[] = [];
    for (const size of [60, 20 * 1024, 256 * 1024, 2 * 1024 * 1024]) {
      for (const declared of [true, false]) {
        const tooLarge = size > 64 * 1024;
        kinds.push(
          { name: "no content-type", path: login, headers: key, size, declared, status: tooLarge ? 413 : 415, error: tooLarge ? "payload_too_large" : "unsupported_media_type" },
          { name: "text/plain", path: login, headers: { ...key, "content-type": "text/plain" }, size, declared, status: 415, error: "unsupported_media_type" },
          { name: "no key", path: login, headers: { "content-type": "application/json" }, size, declared, status: 401, error: "unauthorized" },
          // More uploads at once than one account may have in flight are refused before their type is looked at.
          { name: "upload, no content-type", path: "/api/v1/files/upload", headers: bearer, size, declared, status: 415, error: "unsupported_media_type", or: { status: 429, error: "rate_limited" } },
          { name: "JSON", path: login, headers: { ...key, "content-type": "application/json" }, size, declared, status: tooLarge ? 413 : 400, error: tooLarge ? "payload_too_large" : "invalid_json" },
        );
      }
    }
    const keepAlive = new Agent({ keepAlive: true, maxSockets: 16 });
    afterThisTest(() => keepAlive.destroy());
    const failures: string[] = [];
    const deadline = performance.now() + 20_000;
    let sent = 0;
    const worker = async (n: number) => {
      for (let i = n; i < 1200 && performance.now() < deadline; i += 32) {
        const kind = kinds[i % kinds.length]!;
        const agent = Math.floor(i / kinds.length) % 2 === 0 ? keepAlive : false;
        const got = await send(url, kind, agent);
        sent++;
        const what = `${kind.name}, ${kind.size} bytes${kind.declared ? "" : " chunked"}, ${agent ? "keep-alive" : "close"}`;
        if (got.failure) failures.push(`${what}: ${got.failure}`);
        else if (![kind, kind.or].some((k) => k !== undefined && k.status === got.status && k.error === got.error)) failures.push(`${what}: ${got.status} ${got.error}, expected ${kind.status} ${kind.error}`);
      }
    };
    await Promise.all(Array.from({ length: 32 }, (_, n) => worker(n)));
    expect(sent).toBeGreaterThan(200);
    expect(failures.slice(0, 20), `${failures.length} of ${sent}`).toEqual([]);
  }, 60_000);

  it("an upload refused before its body was read leaves the keep-alive connection serving the next request at once (issue 39 item 9)", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { url } = await serveHttp(t.backend);
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    afterThisTest(() => socket.destroy());
    let received = "";
    socket.on("data", (d) => (received += d));
    const replies = (n: number) =>
      expect.poll(() => received.match(/HTTP\/1\.1 \d{3} /g)?.length ?? 0, { timeout: 3000 }).toBeGreaterThanOrEqual(n);
    // No content-type: 415 once the upload's reader has started, before it takes a byte. 1 MiB
    // is more than Node reads off the socket for a request whose reader has paused.
    const body = " ".repeat(1024 * 1024);
    socket.write(
      `POST /api/v1/files/upload HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${tenant.accessToken}\r\nx-service-app: ${t.app.id}\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
    );
    await replies(1);
    expect(received).toMatch(/^HTTP\/1\.1 415 [^]*"error":"unsupported_media_type"/);
    socket.write("GET /api/v1/health HTTP/1.1\r\nhost: x\r\n\r\n");
    await replies(2);
    expect(received.slice(received.lastIndexOf("HTTP/1.1"))).toMatch(/^HTTP\/1\.1 200 [^]*"status":"ok"/);
  });
});
