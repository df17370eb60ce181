import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { dataBackend, dataClient } from "./data-helpers.ts";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("record CRUD", () => {
  it("creates, reads, lists, merge-patches and deletes a record", async () => {
    const { t, api } = await dataBackend();
    const created = await api.create("todos", { title: "milk", done: false, tags: ["a"] });
    expect(created.status).toBe(201);
    const record = created.body.record;
    expect(record).toEqual({ id: expect.any(String), data: { title: "milk", done: false, tags: ["a"] }, createdAt: expect.stringMatching(ISO), updatedAt: record.createdAt });

    expect((await api.get("todos", record.id)).body).toEqual({ record });
    expect((await api.list("todos")).body).toEqual({ records: [record], total: 1, limit: 50, offset: 0 });

    t.clock.advance(5000);
    const updated = await api.update("todos", record.id, { done: true, tags: null, meta: { by: "me" } });
    expect(updated.status).toBe(200);
    expect(updated.body.record).toEqual({ ...record, data: { title: "milk", done: true, meta: { by: "me" } }, updatedAt: new Date(Date.parse(record.createdAt) + 5000).toISOString() });
    expect((await api.get("todos", record.id)).body.record).toEqual(updated.body.record);

    const removed = await api.remove("todos", record.id);
    expect(removed.status).toBe(204);
    expect(removed.text).toBe("");
    expectError(await api.get("todos", record.id), 404, "not_found");
    expectError(await api.remove("todos", record.id), 404, "not_found");
    expectError(await api.update("todos", record.id, { a: 1 }), 404, "not_found");
  });

  it("keeps collections apart", async () => {
    const { api } = await dataBackend();
    const { body } = await api.create("todos", { a: 1 });
    expectError(await api.get("notes", body.record.id), 404, "not_found");
    expect((await api.list("notes")).body.total).toBe(0);
  });

  it("stores keys such as __proto__ as plain data and never pollutes prototypes", async () => {
    const { t, tenant, api } = await dataBackend();
    const raw = '{"data":{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}}}}';
    const res = await t.request("POST", "/api/v1/data/things", { bearer: tenant.bearer, raw, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(201);
    expect(res.text).toContain('"__proto__":{"polluted":true}');
    const patched = await t.request("PUT", `/api/v1/data/things/${res.body.record.id}`, {
      bearer: tenant.bearer,
      raw: '{"data":{"__proto__":{"more":1}}}',
      headers: { "content-type": "application/json" },
    });
    expect(patched.text).toContain('"__proto__":{"polluted":true,"more":1}');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const found = await api.list("things", { filter: { "__proto__.more": 1 } });
    expect(found.body.records.map((r: { id: string }) => r.id)).toEqual([res.body.record.id]);
  });

  const bad: [string, (api: ReturnType<typeof dataClient>) => Promise<any>, number, string][] = [
    ["data is an array", (api) => api.create("todos", [1, 2]), 400, "invalid_request"],
    ["data is a string", (api) => api.create("todos", "x"), 400, "invalid_request"],
    ["data is missing", (api) => api.create("todos", undefined), 400, "invalid_request"],
    ["data is null", (api) => api.create("todos", null), 400, "invalid_request"],
    ["data over 256 KiB", (api) => api.create("todos", { s: "x".repeat(256 * 1024) }), 413, "payload_too_large"],
    ["data nested 40 deep", (api) => api.create("todos", JSON.parse('{"a":'.repeat(40) + "1" + "}".repeat(40))), 400, "invalid_request"],
    ["data nested 33 deep", (api) => api.create("todos", JSON.parse('{"a":'.repeat(33) + "1" + "}".repeat(33))), 400, "invalid_request"],
    ["collection with a dash", (api) => api.create("my-todos", { a: 1 }), 400, "invalid_request"],
    ["collection of 65 characters", (api) => api.create("a".repeat(65), { a: 1 }), 400, "invalid_request"],
    ["collection with an encoded quote", (api) => api.list("a%27b"), 400, "invalid_request"],
    ["patch that is an array", (api) => api.create("todos", { a: 1 }).then((r) => api.update("todos", r.body.record.id, [1])), 400, "invalid_request"],
    ["patch that grows data past 256 KiB", (api) => api.create("todos", { a: 1 }).then((r) => api.update("todos", r.body.record.id, { s: "y".repeat(256 * 1024) })), 413, "payload_too_large"],
    ["unknown record", (api) => api.get("todos", "rec_nope"), 404, "not_found"],
  ];
  it.each(bad)("refuses %s", async (_name, call, status, code) => {
    const { api } = await dataBackend();
    expectError(await call(api), status, code);
  });

  it("accepts data nested exactly 32 deep", async () => {
    const { api } = await dataBackend();
    expect((await api.create("todos", JSON.parse('{"a":'.repeat(32) + "1" + "}".repeat(32)))).status).toBe(201);
  });

  it("keeps a record unchanged when a patch is refused", async () => {
    const { api } = await dataBackend();
    const { body } = await api.create("todos", { a: 1 });
    expectError(await api.update("todos", body.record.id, { s: "y".repeat(256 * 1024) }), 413, "payload_too_large");
    expect((await api.get("todos", body.record.id)).body.record).toEqual(body.record);
  });

  it("refuses a number JSON cannot hold instead of storing null", async () => {
    const { t, tenant, api } = await dataBackend();
    const res = await t.request("POST", "/api/v1/data/todos", { bearer: tenant.bearer, raw: '{"data":{"n":1e400}}', headers: { "content-type": "application/json" } });
    expectError(res, 400, "invalid_request");
    expect((await api.list("todos")).body.total).toBe(0);
  });

  it("refuses a body that is not JSON", async () => {
    const { t, tenant } = await dataBackend();
    const res = await t.request("POST", "/api/v1/data/todos", { bearer: tenant.bearer, raw: "{data:", headers: { "content-type": "application/json" } });
    expectError(res, 400, "invalid_json");
    const form = await t.request("POST", "/api/v1/data/todos", { bearer: tenant.bearer, raw: "data=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expectError(form, 415, "unsupported_media_type");
  });

  it("requires the tenant bearer on every record endpoint", async () => {
    const { t, api } = await dataBackend();
    const { body } = await api.create("todos", { a: 1 });
    const id = body.record.id;
    const calls: [string, string][] = [
      ["POST", "/api/v1/data/todos"],
      ["GET", "/api/v1/data/todos"],
      ["GET", `/api/v1/data/todos/${id}`],
      ["PUT", `/api/v1/data/todos/${id}`],
      ["DELETE", `/api/v1/data/todos/${id}`],
      ["POST", "/api/v1/data/todos/upsert"],
      ["POST", `/api/v1/data/todos/${id}/share`],
      ["DELETE", `/api/v1/data/todos/${id}/share`],
    ];
    for (const [method, path] of calls) {
      const body = method === "GET" ? undefined : { data: { a: 2 } };
      expectError(await t.request(method, path, { body }), 401, "unauthorized");
      expectError(await t.request(method, path, { body, bearer: { accessToken: "nope", appId: t.app.id } }), 401, "invalid_access_token");
    }
    expect((await api.get("todos", id)).body.record.data).toEqual({ a: 1 });
  });
});

describe("isolation", () => {
  it("answers 404 on every record endpoint for another tenant and for the same email in another app", async () => {
    const { t, api, tenant } = await dataBackend({ todos: { unique: ["slug"] } });
    const other = dataClient(t, await signupTenant(t));
    const app2 = await t.backend.admin.createApp({ name: "second", settings: { collections: { todos: { unique: ["slug"] } } } });
    const twin = dataClient(t, await signupTenant(t, { email: tenant.email, key: app2.publishableKey, appId: app2.id }));

    const { body } = await api.create("todos", { slug: "mine", secret: 1 });
    const id = body.record.id;
    await api.share("todos", id);
    for (const intruder of [other, twin]) {
      expectError(await intruder.get("todos", id), 404, "not_found");
      expectError(await intruder.update("todos", id, { secret: 2 }), 404, "not_found");
      expectError(await intruder.remove("todos", id), 404, "not_found");
      expectError(await intruder.share("todos", id), 404, "not_found");
      expectError(await intruder.revoke("todos", id), 404, "not_found");
      expect((await intruder.list("todos")).body).toEqual({ records: [], total: 0, limit: 50, offset: 0 });
      expect((await intruder.list("todos", { filter: { $id: id } })).body.total).toBe(0);
      // Unique values are per tenant: the same slug is free for someone else.
      expect((await intruder.create("todos", { slug: "mine" })).status).toBe(201);
      const up = await intruder.upsert("todos", { slug: "mine", secret: 3 });
      expect({ status: up.status, created: up.body.created }).toEqual({ status: 200, created: false });
    }
    expect((await api.get("todos", id)).body.record.data).toEqual({ slug: "mine", secret: 1 });
    expect((await api.list("todos")).body.total).toBe(1);
  });

  it("deletes a tenant's records and share links with the tenant", async () => {
    const { t, api, tenant } = await dataBackend();
    const { body } = await api.create("todos", { a: 1 });
    const link = await api.share("todos", body.record.id);
    await t.backend.core.db.tenants.remove(t.app.id, tenant.id);
    // Through the repositories, so the check holds on either engine (TENANTD_TEST_ENGINE).
    expect((await t.backend.core.db.stats.appUsage(t.app.id, 0)).records).toBe(0);
    expectError(await api.shared(link.body.shareToken.token), 404, "not_found");
  });
});

describe("list paging parameters", () => {
  const cases: [string, Record<string, string>][] = [
    ["limit 0", { limit: "0" }],
    ["limit 1001", { limit: "1001" }],
    ["limit -1", { limit: "-1" }],
    ["limit 2.5", { limit: "2.5" }],
    ["limit abc", { limit: "abc" }],
    ["limit empty", { limit: "" }],
    ["offset -1", { offset: "-1" }],
    ["offset 1e3", { offset: "1e3" }],
  ];
  it.each(cases)("refuses %s", async (_name, params) => {
    const { api } = await dataBackend();
    const res = await api.list("todos", params);
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toMatch(/limit|offset/);
  });

  it("refuses a repeated limit", async () => {
    const { t, tenant } = await dataBackend();
    expectError(await t.request("GET", "/api/v1/data/todos?limit=1&limit=2", { bearer: tenant.bearer }), 400, "invalid_request");
  });

  it("accepts the bounds and echoes them", async () => {
    const { api } = await dataBackend();
    await api.seed("todos", [{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect((await api.list("todos", { limit: 1000, offset: 0 })).body).toMatchObject({ total: 3, limit: 1000, offset: 0 });
    const tail = await api.list("todos", { limit: 1, offset: 5 });
    expect(tail.body).toEqual({ records: [], total: 3, limit: 1, offset: 5 });
  });

  it("returns as many records as each request's limit when the same filter is listed with different limits", async () => {
    const { api } = await dataBackend();
    await api.seed("todos", [{ n: 1 }, { n: 2 }, { n: 3 }]);
    const sizes: number[][] = [];
    for (const limit of [1, 2, 1, 3, 2]) {
      const page = await api.list("todos", { filter: { n: { $gte: 1 } }, sort: { n: 1 }, limit });
      sizes.push(page.body.records.map((r: { data: { n: number } }) => r.data.n));
    }
    expect(sizes).toEqual([[1], [1, 2], [1], [1, 2, 3], [1, 2]]);
  });
});

describe("unique fields and upsert", () => {
  it("answers 409 on create, update and upsert when a unique value is taken", async () => {
    const { api } = await dataBackend({ users: { unique: ["email", "profile.handle"] } });
    const [a, b] = await api.seed("users", [
      { email: "a@x.io", profile: { handle: "aa" } },
      { email: "b@x.io", profile: { handle: "bb" } },
    ]);
    expectError(await api.create("users", { email: "a@x.io" }), 409, "conflict");
    expectError(await api.create("users", { email: "c@x.io", profile: { handle: "aa" } }), 409, "conflict");
    expectError(await api.update("users", b!, { email: "a@x.io" }), 409, "conflict");
    expectError(await api.upsert("users", { email: "b@x.io", profile: { handle: "aa" } }), 409, "conflict");
    // Type-exact: the number 1 and the string "1" are different values.
    expect((await api.create("users", { email: 1 })).status).toBe(201);
    expect((await api.create("users", { email: "1" })).status).toBe(201);
    // Missing and null never collide.
    expect((await api.create("users", { other: 1 })).status).toBe(201);
    expect((await api.create("users", { other: 2, email: null })).status).toBe(201);
    // A record may keep its own value.
    expect((await api.update("users", a!, { email: "a@x.io", n: 1 })).status).toBe(200);
    expect((await api.get("users", b!)).body.record.data).toEqual({ email: "b@x.io", profile: { handle: "bb" } });
    expect((await api.list("users")).body.total).toBe(6);
  });

  it("creates with 201 and merge-patches the match with 200", async () => {
    const { t, api } = await dataBackend({ users: { unique: ["email"] } });
    const first = await api.upsert("users", { email: "a@x.io", name: "A", age: 3 });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ record: expect.objectContaining({ data: { email: "a@x.io", name: "A", age: 3 } }), created: true });
    t.clock.advance(1000);
    const second = await api.upsert("users", { email: "a@x.io", name: "B", age: null });
    expect(second.status).toBe(200);
    expect(second.body.created).toBe(false);
    expect(second.body.record).toMatchObject({ id: first.body.record.id, data: { email: "a@x.io", name: "B" }, createdAt: first.body.record.createdAt });
    expect(second.body.record.updatedAt).not.toBe(first.body.record.updatedAt);
    expect((await api.list("users")).body.total).toBe(1);
  });

  it("upsert still answers 409 when two records held the key before it was made unique", async () => {
    const { t, api } = await dataBackend({ users: {} });
    await api.seed("users", [{ email: "a@x.io", n: 1 }, { email: "a@x.io", n: 2 }]);
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { users: { unique: ["email"] } } } });
    expectError(await api.upsert("users", { email: "a@x.io", n: 3 }), 409, "conflict");
    expect((await api.upsert("users", { email: "b@x.io", n: 3 })).status).toBe(201);
    expect((await api.upsert("users", { email: "b@x.io", n: 4 })).body.record.data).toEqual({ email: "b@x.io", n: 4 });
  });

  it("explains what is missing for an upsert", async () => {
    const { api } = await dataBackend({ users: { unique: ["email"] } });
    const noField = await api.upsert("users", { name: "x" });
    expectError(noField, 400, "invalid_request");
    expect(noField.body.message).toContain("email");
    const noUnique = await api.upsert("notes", { name: "x" });
    expectError(noUnique, 400, "invalid_request");
    expect(noUnique.body.message).toContain("unique");
    expectError(await api.upsert("users", [1]), 400, "invalid_request");
  });

  it("serializes concurrent creates of the same unique value", async () => {
    const { api } = await dataBackend({ users: { unique: ["email"] } });
    const results = await Promise.all(Array.from({ length: 10 }, () => api.create("users", { email: "same@x.io" })));
    expect(results.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(409)]);
  });
});

describe("developer usage", () => {
  it("counts the app's records", async () => {
    const { t, api } = await dataBackend();
    await api.seed("todos", [{ a: 1 }, { a: 2 }]);
    expect((await t.backend.core.db.stats.appUsage(t.app.id, 0)).records).toBe(2);
  });
});

describe("bounded work per request", () => {
  it("ends a page of large records at the byte budget; paging on from offset + records.length reads every record", async () => {
    const { api } = await dataBackend();
    const big = "x".repeat(250 * 1024);
    const ids = await api.seed("blobs", Array.from({ length: 40 }, (_, i) => ({ i, big })));
    const first = await api.list("blobs", { limit: 1000 });
    expect(first.status).toBe(200);
    expect(first.body.total).toBe(40);
    expect(first.body.limit).toBe(1000);
    expect(first.body.records.length).toBeGreaterThan(0);
    expect(first.body.records.length).toBeLessThan(40);
    const seen: string[] = [];
    for (let offset = 0; offset < 40; ) {
      const page = await api.list("blobs", { limit: 1000, offset });
      expect(page.body.records.length).toBeGreaterThan(0);
      seen.push(...page.body.records.map((r: { id: string }) => r.id));
      offset += page.body.records.length;
    }
    expect(seen.sort()).toEqual([...ids].sort());
  });

  it("refuses a merge patch nested beyond the depth limit with 400, not a stack overflow", async () => {
    const { t, tenant, api } = await dataBackend();
    const [id] = await api.seed("notes", [{ a: 1 }]);
    const deep = `{"data":${'{"d":'.repeat(100_000)}1${"}".repeat(100_000)}}`;
    const res = await t.request("PUT", `/api/v1/data/notes/${id}`, { bearer: tenant.bearer, raw: deep, headers: { "content-type": "application/json" } });
    expectError(res, 400, "invalid_request");
    expect((await api.get("notes", id!)).body.record.data).toEqual({ a: 1 });
  });
});
