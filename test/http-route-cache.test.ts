import { describe, expect, it } from "vitest";
import { H3 } from "h3";
import { cacheRouteMatches } from "../src/http/route-cache.ts";
import { expectError, signupTenant, startBackend } from "./_helpers.ts";

/** A bare h3 app whose handlers answer with the route's parameters, and change them afterwards. */
function echoApp(size?: number) {
  const app = new H3();
  app.get("/items/:id", (event) => {
    const params = { ...event.context.params };
    // A handler that writes to its parameters must not change the next request's.
    event.context.params!.id = "changed by a handler";
    return { route: "item", params };
  });
  app.get("/items/:id/parts/:part", (event) => ({ route: "part", params: { ...event.context.params } }));
  app.get("/static", () => ({ route: "static" }));
  // h3's routing hooks are there: a release that renamed them would turn the cache off unseen.
  expect(cacheRouteMatches(app, size)).toBe(true);
  return app;
}

const get = async (app: H3, path: string, method = "GET") => {
  const res = await app.fetch(new Request(`http://localhost${path}`, { method }));
  return { status: res.status, body: method === "HEAD" ? undefined : await res.json().catch(() => undefined) };
};

describe("route matches kept between requests", () => {
  it("gives each request its own parameters, also for a path asked again", async () => {
    const app = echoApp();
    for (let round = 0; round < 3; round++) {
      expect(await get(app, "/items/a")).toEqual({ status: 200, body: { route: "item", params: { id: "a" } } });
      expect(await get(app, "/items/b")).toEqual({ status: 200, body: { route: "item", params: { id: "b" } } });
      expect(await get(app, "/items/a/parts/7")).toEqual({ status: 200, body: { route: "part", params: { id: "a", part: "7" } } });
      expect(await get(app, "/static")).toEqual({ status: 200, body: { route: "static" } });
    }
  });

  it("tells methods apart, and answers HEAD as GET", async () => {
    const app = echoApp();
    app.post("/items/:id", (event) => ({ route: "post", params: { ...event.context.params } }));
    expect(await get(app, "/items/x")).toEqual({ status: 200, body: { route: "item", params: { id: "x" } } });
    expect(await get(app, "/items/x", "POST")).toEqual({ status: 200, body: { route: "post", params: { id: "x" } } });
    expect(await get(app, "/items/x")).toEqual({ status: 200, body: { route: "item", params: { id: "x" } } });
    expect((await get(app, "/items/x", "HEAD")).status).toBe(200);
    expect((await get(app, "/items/x", "DELETE")).status).toBe(404);
  });

  it("follows a route added after requests were answered", async () => {
    const app = echoApp();
    expect(await get(app, "/items/new/parts/1")).toMatchObject({ body: { route: "part" } });
    expect((await get(app, "/later/1")).status).toBe(404);
    app.get("/items/new/parts/:part", () => ({ route: "more specific" }));
    app.get("/later/:n", (event) => ({ route: "later", params: { ...event.context.params } }));
    expect(await get(app, "/items/new/parts/1")).toMatchObject({ body: { route: "more specific" } });
    expect(await get(app, "/later/1")).toEqual({ status: 200, body: { route: "later", params: { n: "1" } } });
  });

  it("stays right past its bound", async () => {
    const app = echoApp(8);
    for (let i = 0; i < 50; i++) {
      expect(await get(app, `/items/${i}`)).toEqual({ status: 200, body: { route: "item", params: { id: String(i) } } });
      expect(await get(app, `/items/${i % 3}/parts/${i}`)).toEqual({ status: 200, body: { route: "part", params: { id: String(i % 3), part: String(i) } } });
    }
  });
});

describe("tenantd's routes with kept matches", () => {
  it("reads each record by its own id, and answers 404 and 405 as before", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { n: i } } })).body.record.id);
    for (let round = 0; round < 2; round++) {
      for (const [i, id] of ids.entries()) {
        const res = await t.request("GET", `/api/v1/data/notes/${id}`, { bearer: tenant.bearer });
        expect({ status: res.status, id: res.body.record.id, n: res.body.record.data.n }).toEqual({ status: 200, id, n: i });
      }
      expectError(await t.request("GET", "/api/v1/data/notes/rec_doesnotexist", { bearer: tenant.bearer }), 404, "not_found");
      expectError(await t.request("GET", "/api/v1/no/such/route", { bearer: tenant.bearer }), 404, "not_found");
      expectError(await t.request("PATCH", "/api/v1/auth/me", { bearer: tenant.bearer, body: {} }), 405, "method_not_allowed");
      const counted = await t.request("POST", "/api/v1/billing/usage/calls/increment", { bearer: tenant.bearer, body: {} });
      expect({ status: counted.status, count: counted.body.count }).toEqual({ status: 200, count: round + 1 });
      const other = await t.request("POST", "/api/v1/billing/usage/other/increment", { bearer: tenant.bearer, body: {} });
      expect({ status: other.status, count: other.body.count }).toEqual({ status: 200, count: round + 1 });
    }
  });
});
