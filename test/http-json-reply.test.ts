import { describe, expect, it } from "vitest";
import { H3Event, HTTPResponse, toResponse } from "h3";
import { plainJsonReply } from "../src/http/json-reply.ts";
import { jsonText } from "../src/http/json-text.ts";
import { dataBackend } from "./data-helpers.ts";
import { serveHttp, signupTenant } from "./_helpers.ts";

const eventFor = (method = "GET") => new H3Event(new Request("http://localhost/x", { method }));

const VALUES: Record<string, unknown> = {
  object: { tenant: { id: "tnt_1", email: "a@example.com", emailVerifiedAt: null } },
  tricky: {
    text: 'quote " backslash \\ </script> tab \t newline \n',
    unicode: "é 漢字 😀 \u2028 \u2029 \u0001",
    numbers: [0, -1, 1.5, 1e21, -2.5e-7, Number.MAX_SAFE_INTEGER],
    nested: { deeper: [null, true, false, {}, []] },
    missing: undefined,
    date: new Date(Date.UTC(2026, 0, 2)),
  },
  array: [1, "two", { three: 3 }],
  empty: {},
  nullPrototype: Object.assign(Object.create(null) as object, { a: 1 }),
  jsonText: jsonText('{"record":{"id":"rec_1","data":{"a":1}}}'),
};

async function rendered(res: Response | Promise<Response>) {
  const r = await res;
  return { status: r.status, type: r.headers.get("content-type"), body: await r.text() };
}

describe("JSON replies built without h3's header copies", () => {
  it("send the same status, content type and bytes as h3 would, plus the request id", async () => {
    for (const [name, value] of Object.entries(VALUES)) {
      for (const status of [undefined, 201]) {
        const ours = eventFor();
        const h3s = eventFor();
        if (status) ours.res.status = h3s.res.status = status;
        const reply = plainJsonReply(ours, value, "rid-1");
        expect(reply, name).toBeDefined();
        expect({ name, ...(await rendered(reply!)) }).toEqual({ name, ...(await rendered(toResponse(value, h3s))) });
        expect(reply!.headers.get("x-request-id")).toBe("rid-1");
      }
    }
  });

  it("leave to h3 every reply they could get wrong", () => {
    const withHeader = eventFor();
    withHeader.res.headers.set("cache-control", "no-store");
    const withErrHeader = eventFor();
    withErrHeader.res.errHeaders.set("retry-after", "5");
    const withStatusText = eventFor();
    withStatusText.res.statusText = "Fine";
    const noContent = eventFor();
    noContent.res.status = 204;
    const redirect = eventFor();
    redirect.res.status = 302;
    const cases: [string, H3Event, unknown][] = [
      ["a header set by the handler", withHeader, { a: 1 }],
      ["an error header", withErrHeader, { a: 1 }],
      ["a status text", withStatusText, { a: 1 }],
      ["a status without a body", noContent, { a: 1 }],
      ["a status outside 2xx", redirect, { a: 1 }],
      ["HEAD", eventFor("HEAD"), { a: 1 }],
      ["a string", eventFor(), "text"],
      ["a number", eventFor(), 1],
      ["null", eventFor(), null],
      ["a class instance", eventFor(), new (class Thing {})()],
      ["a Map", eventFor(), new Map()],
      ["bytes", eventFor(), new Uint8Array(1)],
      ["a Response", eventFor(), new Response("x")],
      ["another HTTPResponse", eventFor(), new HTTPResponse("x", { headers: { "content-type": "text/plain" } })],
    ];
    for (const [name, event, value] of cases) expect(plainJsonReply(event, value, "rid"), name).toBeUndefined();
  });

  it("over HTTP every kind of reply carries the request id and its own headers", async () => {
    const { t, tenant, api } = await dataBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example"] } });
    const created = (await api.create("notes", { a: 1 })).body.record;
    const { url } = await serveHttp(t.backend);
    const bearer = { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id };
    const send = async (method: string, path: string, headers: Record<string, string> = {}, body?: unknown) => {
      const res = await fetch(url + path, { method, headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) }, body: body ? JSON.stringify(body) : undefined });
      const text = await res.text();
      // A JSON reply says its length (no chunked encoding), whichever path built it.
      if (text) expect(res.headers.get("content-length"), path).toBe(String(Buffer.byteLength(text)));
      return { status: res.status, id: res.headers.get("x-request-id"), type: res.headers.get("content-type"), text, res };
    };

    const me = await send("GET", "/api/v1/auth/me", { ...bearer, "x-request-id": "mine-1" });
    expect({ status: me.status, id: me.id, type: me.type, body: JSON.parse(me.text) }).toEqual({
      status: 200,
      id: "mine-1",
      type: "application/json;charset=UTF-8",
      body: { tenant: { id: tenant.id, email: tenant.email, emailVerifiedAt: null, createdAt: expect.any(String) } },
    });
    const fresh = await send("GET", `/api/v1/data/notes/${created.id}`, bearer);
    expect({ status: fresh.status, id: fresh.id, body: JSON.parse(fresh.text) }).toEqual({ status: 200, id: expect.stringMatching(/^[0-9a-f-]{36}$/), body: { record: created } });

    const made = await send("POST", "/api/v1/data/notes", bearer, { data: { b: 2 } });
    expect({ status: made.status, id: made.id, type: made.type, data: JSON.parse(made.text).record.data }).toEqual({ status: 201, id: expect.any(String), type: "application/json;charset=UTF-8", data: { b: 2 } });

    const gone = await send("DELETE", `/api/v1/data/notes/${created.id}`, { ...bearer, "x-request-id": "del-1" });
    expect({ status: gone.status, id: gone.id, text: gone.text }).toEqual({ status: 204, id: "del-1", text: "" });

    // Headers the handler or the CORS check put on event.res still arrive, beside the id.
    const other = await signupTenant(t);
    const login = await send("POST", "/api/v1/auth/login", { "x-service-key": t.app.publishableKey, "x-request-id": "login-1" }, { email: other.email, password: "correct horse battery" });
    const noStore = (r: { res: Response }) => ({ cache: r.res.headers.get("cache-control"), pragma: r.res.headers.get("pragma") });
    expect({ status: login.status, id: login.id, ...noStore(login) }).toEqual({ status: 200, id: "login-1", cache: "no-store", pragma: "no-cache" });
    // A token endpoint that fails still says not to keep the reply.
    const refused = await send("POST", "/api/v1/auth/refresh", { "x-service-key": t.app.publishableKey, "x-request-id": "refresh-1" }, { refreshToken: "rt_not_a_token" });
    expect({ status: refused.status, id: refused.id, ...noStore(refused) }).toEqual({ status: 401, id: "refresh-1", cache: "no-store", pragma: "no-cache" });
    expect(noStore(me)).toEqual({ cache: null, pragma: null });
    const cors = await send("GET", "/api/v1/auth/me", { ...bearer, origin: "https://app.example", "x-request-id": "cors-1" });
    expect({ status: cors.status, id: cors.id, allow: cors.res.headers.get("access-control-allow-origin"), vary: cors.res.headers.get("vary") }).toEqual({
      status: 200,
      id: "cors-1",
      allow: "https://app.example",
      vary: "Origin",
    });
    // From the app's browser origin every reply, errors too, lets the page read it.
    const corsOf = (r: { res: Response }) => ({
      allow: r.res.headers.get("access-control-allow-origin"),
      expose: r.res.headers.get("access-control-expose-headers"),
      vary: r.res.headers.get("vary"),
    });
    const browser = { origin: "https://app.example", "x-service-app": t.app.id };
    const exposed = { expose: "retry-after, content-disposition, content-range, idempotent-replayed", vary: "Origin" };
    const record = await send("POST", "/api/v1/data/notes", { ...bearer, origin: "https://app.example" }, { data: { c: 3 } });
    expect({ status: record.status, ...corsOf(record) }).toEqual({ status: 201, allow: "https://app.example", ...exposed });
    const unauthorized = await send("GET", "/api/v1/auth/me", { ...browser, authorization: "Bearer nope" });
    expect({ status: unauthorized.status, ...corsOf(unauthorized) }).toEqual({ status: 401, allow: "https://app.example", ...exposed });
    const badToken = await send("POST", "/api/v1/auth/refresh", { "x-service-key": t.app.publishableKey, origin: "https://app.example" }, { refreshToken: "rt_nope" });
    expect({ status: badToken.status, ...corsOf(badToken), ...noStore(badToken) }).toEqual({ status: 401, allow: "https://app.example", ...exposed, cache: "no-store", pragma: "no-cache" });
    const foreign = await send("GET", "/api/v1/auth/me", { ...bearer, origin: "https://evil.example" });
    expect({ status: foreign.status, ...corsOf(foreign) }).toEqual({ status: 403, allow: null, expose: null, vary: "Origin" });
    const preflight = await send("OPTIONS", "/api/v1/data/notes", { origin: "https://app.example", "access-control-request-method": "POST" });
    expect({ status: preflight.status, allow: preflight.res.headers.get("access-control-allow-origin"), vary: preflight.res.headers.get("vary") }).toEqual({ status: 204, allow: "https://app.example", vary: "Origin" });
    const publicRead = await send("GET", "/api/v1/public/shared/not-a-token", { origin: "https://anywhere.example" });
    expect({ status: publicRead.status, ...corsOf(publicRead) }).toEqual({ status: 404, allow: "*", ...exposed });

    // A route's Response whose headers cannot change (one from fetch, a redirect) still gets them.
    t.backend.get("/api/v1/public/test-immutable", () => Response.redirect("https://elsewhere.example/", 302));
    const moved = await fetch(`${url}/api/v1/public/test-immutable`, { redirect: "manual", headers: { origin: "https://anywhere.example", "x-request-id": "imm-1" } });
    expect({ status: moved.status, location: moved.headers.get("location"), id: moved.headers.get("x-request-id"), allow: moved.headers.get("access-control-allow-origin") }).toEqual({
      status: 302,
      location: "https://elsewhere.example/",
      id: "imm-1",
      allow: "*",
    });

    const denied = await send("GET", "/api/v1/auth/me", { "x-service-app": t.app.id, "x-request-id": "err-1" });
    expect({ status: denied.status, id: denied.id, error: JSON.parse(denied.text).error }).toEqual({ status: 401, id: "err-1", error: "unauthorized" });
  });
});
