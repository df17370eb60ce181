import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { serveHttp, signupTenant, startBackend } from "./_helpers.ts";

/**
 * Over node:http the hot paths read `x-request-id`, `x-service-app`, `x-service-key`,
 * `origin`, `authorization`, `content-type` and `content-length` from Node's own header
 * object (src/http/request-headers.ts): a repeated header must read as the Fetch standard
 * joins it, as through the Request.
 */

/** One raw HTTP/1.1 request (headers as given, repeats included); the status line and headers of the reply. */
function rawGet(url: string, path: string, headers: [string, string][], method = "GET", body = ""): Promise<{ status: number; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), "127.0.0.1");
    let received = "";
    socket.on("data", (d) => {
      received += d;
      const end = received.indexOf("\r\n\r\n");
      if (end < 0) return;
      const [statusLine, ...lines] = received.slice(0, end).split("\r\n");
      socket.destroy();
      resolve({ status: Number(statusLine!.split(" ")[1]), headers: Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()])) });
    });
    socket.on("error", reject);
    socket.write(`${method} ${path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${headers.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n${body}`);
  });
}

describe("request headers read from Node's header object", () => {
  it("a repeated x-request-id or x-service-app is joined, as the Fetch standard reads it, and refused", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { url } = await serveHttp(t.backend);
    const auth: [string, string] = ["authorization", `Bearer ${tenant.accessToken}`];

    const once = await rawGet(url, "/api/v1/auth/me", [auth, ["x-service-app", t.app.id], ["x-request-id", "rid-1"]]);
    expect([once.status, once.headers["x-request-id"]]).toEqual([200, "rid-1"]);

    // "rid-1, rid-2" holds a space: not an id tenantd echoes, so it makes its own.
    const twice = await rawGet(url, "/api/v1/auth/me", [auth, ["x-service-app", t.app.id], ["x-request-id", "rid-1"], ["x-request-id", "rid-2"]]);
    expect(twice.status).toBe(200);
    expect(twice.headers["x-request-id"]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-/);

    // The same app id twice reads "app, app": no such app.
    const apps = await rawGet(url, "/api/v1/auth/me", [auth, ["x-service-app", t.app.id], ["x-service-app", t.app.id]]);
    expect(apps.status).toBeGreaterThanOrEqual(400);
    expect(apps.status).toBeLessThan(500);
  });

  it("a repeated authorization or content-type reads joined, and is refused; spelt in any case, once, it is read", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { url } = await serveHttp(t.backend);
    const bearer = `Bearer ${tenant.accessToken}`;
    const app: [string, string] = ["x-service-app", t.app.id];

    expect((await rawGet(url, "/api/v1/auth/me", [["Authorization", bearer], app])).status).toBe(200);
    // Node keeps the first of a repeated authorization; the Fetch standard reads "Bearer a, Bearer a": no token.
    expect((await rawGet(url, "/api/v1/auth/me", [["authorization", bearer], ["Authorization", bearer], app])).status).toBe(401);
    // A repeat of another header leaves the single authorization as it is.
    expect((await rawGet(url, "/api/v1/auth/me", [["authorization", bearer], app, ["x-extra", "1"], ["x-extra", "2"]])).status).toBe(200);

    const body = JSON.stringify({ data: { n: 1 } });
    const post = (types: string[]) =>
      rawGet(url, "/api/v1/data/notes", [["authorization", bearer], app, ...types.map((v): [string, string] => ["content-type", v]), ["content-length", String(body.length)]], "POST", body);
    expect((await post(["application/json"])).status).toBe(201);
    expect((await post(["application/json", "application/json"])).status).toBe(415);
    // A repeated content-length never reaches tenantd: Node refuses the request.
    const lengths = await rawGet(url, "/api/v1/data/notes", [["authorization", bearer], app, ["content-type", "application/json"], ["content-length", String(body.length)], ["Content-Length", String(body.length)]], "POST", body);
    expect(lengths.status).toBe(400);
  });
});
