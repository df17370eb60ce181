import { request } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { expectError, serveHttp, signupTenant, startBackend } from "./_helpers.ts";

interface Sent {
  status: number;
  body: any;
}

/**
 * Posts `total` bytes of JSON-looking body with Node's http client, chunked or with an honest
 * content-length, and reads the answer: the way a client meets a 413 mid-send.
 */
function postBig(url: string, path: string, headers: Record<string, string>, total: number, chunked: boolean): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    const head = Buffer.from('{"email":"a@example.com","password":"');
    const h: Record<string, string> = { "content-type": "application/json", ...headers };
    if (!chunked) h["content-length"] = String(total);
    const req = request(`${url}${path}`, { method: "POST", headers: h });
    let answered = false;
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        resolve({ status: res.statusCode!, body: JSON.parse(text) });
        // Done with it: the rest of the body is never sent.
        req.destroy();
      });
      res.on("error", reject);
    });
    req.on("error", (e) => {
      if (!answered) reject(new Error(`no answer read: ${e.message}`));
    });
    let written = 0;
    req.write(head);
    written += head.length;
    const pump = () => {
      while (!answered && written < total) {
        const n = Math.min(chunk.length, total - written);
        written += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once("drain", pump);
      }
      if (!answered) req.end();
    };
    pump();
  });
}

/** A raw connection to the server, with what it has received so far and a way to wait for more. */
function rawConnection(url: string) {
  const socket = connect(Number(new URL(url).port), "127.0.0.1");
  const state = { received: "", closed: false };
  socket.on("data", (d) => (state.received += d));
  socket.on("error", () => {});
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve(void (state.closed = true))));
  const waitFor = (what: string, done: () => boolean, ms = 5000) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms; received: ${state.received.slice(0, 500)}`)), ms);
      const check = () => {
        if (!done()) return;
        clearTimeout(timer);
        socket.off("data", check);
        resolve();
      };
      socket.on("data", check);
      check();
    });
  /** Resolves once `n` whole replies (status line through a JSON body) have arrived. */
  const replies = (n: number) => waitFor(`${n} replies`, () => (state.received.match(/HTTP\/1\.1 \d{3}[^]*?\r\n\r\n\{[^]*?\}(?=HTTP|$)/g) ?? []).length >= n);
  return { socket, state, closed, waitFor, replies };
}

const chunkOf = (bytes: number) => `${bytes.toString(16)}\r\n${" ".repeat(bytes)}\r\n`;

describe("request bodies", () => {
  it("an oversized JSON body's 413 { error, message } is read by Node's http client, chunked or not (review item 15)", async () => {
    const t = await startBackend();
    const { url } = await serveHttp(t.backend);
    for (let i = 0; i < 15; i++) {
      for (const chunked of [true, false]) {
        const res = await postBig(url, "/api/v1/auth/login", { "x-service-key": t.app.publishableKey }, 8 * 1024 * 1024, chunked);
        expect({ status: res.status, error: res.body.error, message: typeof res.body.message }).toEqual({ status: 413, error: "payload_too_large", message: "string" });
      }
    }
  });

  it("a refused JSON body: the 413 comes while the client is still sending, the rest is dropped, and the connection serves the next request", async () => {
    const t = await startBackend({ maxJsonBytes: 1024 });
    const { url } = await serveHttp(t.backend);
    const login = `POST /api/v1/auth/login HTTP/1.1\r\nhost: x\r\nx-service-key: ${t.app.publishableKey}\r\ncontent-type: application/json\r\n`;
    const health = "GET /api/v1/health HTTP/1.1\r\nhost: x\r\n\r\n";
    for (const declared of [false, true]) {
      const c = rawConnection(url);
      c.socket.write(login + (declared ? "content-length: 6000\r\n\r\n" + " ".repeat(2000) : "transfer-encoding: chunked\r\n\r\n" + chunkOf(2000)));
      await c.replies(1);
      expect(c.state.received, `declared: ${declared}`).toMatch(/^HTTP\/1\.1 413 [^]*\r\nconnection: keep-alive\r\n[^]*"error":"payload_too_large"/i);
      c.socket.write((declared ? " ".repeat(4000) : chunkOf(2000) + chunkOf(2000) + "0\r\n\r\n") + health);
      await c.replies(2);
      expect(c.state.received.slice(c.state.received.lastIndexOf("HTTP/1.1"))).toMatch(/^HTTP\/1\.1 200 [^]*"status":"ok"/);
      c.socket.destroy();
    }
  });

  it("a client that keeps sending a refused JSON body is cut off after 16 MiB more, and one that stalls after the idle timeout", async () => {
    const t = await startBackend({ maxJsonBytes: 1024, bodyIdleTimeoutSeconds: 0.5 });
    const { url } = await serveHttp(t.backend);
    const login = `POST /api/v1/auth/login HTTP/1.1\r\nhost: x\r\nx-service-key: ${t.app.publishableKey}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n`;
    const flood = rawConnection(url);
    const chunk = Buffer.from(chunkOf(64 * 1024));
    let written = 0;
    flood.socket.write(login);
    const pump = () => {
      while (!flood.state.closed && written < 256 * 1024 * 1024) {
        written += chunk.length;
        if (!flood.socket.write(chunk)) return void flood.socket.once("drain", pump);
      }
    };
    pump();
    await flood.closed;
    expect(flood.state.received).toMatch(/^HTTP\/1\.1 413 /);
    // Dropped up to the bound (what was written includes both sides' socket buffers), no further.
    expect(written).toBeGreaterThan(16 * 1024 * 1024);
    expect(written).toBeLessThan(48 * 1024 * 1024);

    const stall = rawConnection(url);
    stall.socket.write(login + chunkOf(2000));
    await stall.replies(1);
    const answered = performance.now();
    await stall.closed;
    expect(stall.state.received).toMatch(/^HTTP\/1\.1 413 /);
    expect(performance.now() - answered).toBeLessThan(5000);
  });

  it("a client that goes away in the middle of a JSON body or an upload is no server error: nothing is logged above info", async () => {
    const lines: { level: string; message: string }[] = [];
    const at = (level: string) => (message: string) => void lines.push({ level, message });
    const t = await startBackend({ logger: { debug: at("debug"), info: at("info"), warn: at("warn"), error: at("error") } });
    const tenant = await signupTenant(t);
    const { url } = await serveHttp(t.backend);
    const starts = [
      `POST /api/v1/auth/login HTTP/1.1\r\nhost: x\r\nx-service-key: ${t.app.publishableKey}\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{"email":"a@`,
      `POST /api/v1/billing/usage/calls/increment HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${tenant.accessToken}\r\nx-service-app: ${t.app.id}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n${chunkOf(10)}`,
      `POST /api/v1/files/upload HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${tenant.accessToken}\r\nx-service-app: ${t.app.id}\r\ncontent-type: multipart/form-data; boundary=b\r\ncontent-length: 100000\r\n\r\n--b\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello`,
    ];
    for (const start of starts) {
      const c = rawConnection(url);
      c.socket.write(start);
      await new Promise((r) => setTimeout(r, 150));
      c.socket.destroy();
      await c.closed;
    }
    // The server noticed each request end: its access log line is written once the request is over.
    await expect.poll(() => lines.filter((l) => l.message === "request").length, { timeout: 3000 }).toBeGreaterThanOrEqual(starts.length + 1);
    expect(lines.filter((l) => l.level === "error" || l.level === "warn")).toEqual([]);
  });

  it("invalid UTF-8 in a JSON body is 400 invalid_json, never stored as U+FFFD (review item 14)", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const raw = Buffer.concat([Buffer.from('{"data":{"name":"caf'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]);
    const res = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, headers: { "content-type": "application/json" }, raw });
    expectError(res, 400, "invalid_json");
    const pw = Buffer.concat([Buffer.from('{"email":"x@example.com","password":"aaaaaaa'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]);
    expectError(await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, headers: { "content-type": "application/json" }, raw: pw }), 400, "invalid_json");
    // Well-formed multi-byte UTF-8 is of course fine.
    const ok = await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { name: "café ☕ 𝄞" } } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.record.data.name).toBe("café ☕ 𝄞");
  });

  it("a JSON body that stalls is refused with 408 request_timeout (review item 5)", async () => {
    const t = await startBackend({ bodyIdleTimeoutSeconds: 0.5 });
    const { url } = await serveHttp(t.backend);
    const res = await new Promise<Sent>((resolve, reject) => {
      const req = request(`${url}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", "content-length": "100", "x-service-key": t.app.publishableKey } });
      req.on("response", (r) => {
        let text = "";
        r.on("data", (d) => (text += d));
        r.on("end", () => resolve({ status: r.statusCode!, body: JSON.parse(text) }));
      });
      req.on("error", reject);
      req.write('{"email":');
    });
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 408, error: "request_timeout" });
  });

  it("bodies read from Node's buffer: pipelined requests on one connection, and a body that comes in a later packet, are each read whole and in order", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { url } = await serveHttp(t.backend);
    const post = (body: string) =>
      `POST /api/v1/billing/usage/calls/increment HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${tenant.accessToken}\r\nx-service-app: ${t.app.id}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let received = "";
    socket.on("data", (d) => (received += d));
    const replies = (n: number) =>
      new Promise<number[]>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`replies so far: ${received}`)), 5000);
        const check = () => {
          const counts = [...received.matchAll(/"count":(\d+)/g)].map((m) => Number(m[1]));
          if (counts.length >= n) {
            clearTimeout(timer);
            socket.off("data", check);
            resolve(counts);
          }
        };
        socket.on("data", check);
        check();
      });
    // Three requests in one write: each body is its own, whole. Node runs pipelined requests'
    // handlers side by side (PostgreSQL's may finish in any order) and answers in order, so
    // each reply's count is its own increment on top of none or another reply's count.
    socket.write(post("{}") + post('{"by":2}') + post('{"by":3}'));
    const counts = await replies(3);
    expect(Math.max(...counts)).toBe(6);
    for (const [i, by] of [1, 2, 3].entries()) expect([0, ...counts], `reply ${i + 1}: ${counts.join(", ")}`).toContain(counts[i]! - by);
    // The last bytes of a body a while after its headers: read by streaming, not cut short.
    const last = post('{"by":4}');
    socket.write(last.slice(0, -3));
    await new Promise((r) => setTimeout(r, 200));
    socket.write(last.slice(-3));
    expect((await replies(4))[3]).toBe(10);
    socket.destroy();
  });
});
