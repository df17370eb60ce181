import { describe, expect, it } from "vitest";
import { expectError, signupTenant, type TestBackend, type TestTenant } from "./_helpers.ts";
import { dataBackend, dataClient } from "./data-helpers.ts";
import { runMaintenance } from "../src/maintenance.ts";
import { hashToken } from "../src/crypto/random.ts";

type Op = Record<string, unknown>;

function batchClient(t: TestBackend, tenant: TestTenant) {
  return (operations: Op[] | unknown, key?: string) =>
    t.request("POST", "/api/v1/batch", { bearer: tenant.bearer, body: { operations }, ...(key === undefined ? {} : { headers: { "idempotency-key": key } }) });
}

const usage = async (t: TestBackend, tenant: TestTenant, feature: string) => (await t.request("GET", `/api/v1/billing/usage/${feature}`, { bearer: tenant.bearer })).body.count as number;

describe("POST /api/v1/batch", () => {
  it("runs create, update, upsert, delete and increment in order and answers each as its single call would", async () => {
    const { t, tenant, api } = await dataBackend({ people: { unique: ["email"] } });
    const batch = batchClient(t, tenant);
    const [a, b] = await api.seed("notes", [{ title: "a", tags: { x: 1 } }, { title: "b" }]);
    const res = await batch([
      { op: "create", collection: "notes", data: { title: "c" } },
      { op: "update", collection: "notes", id: a, data: { tags: { x: null, y: 2 } } },
      { op: "upsert", collection: "people", data: { email: "p@example.com", n: 1 } },
      { op: "upsert", collection: "people", data: { email: "p@example.com", n: 2 } },
      { op: "delete", collection: "notes", id: b },
      { op: "increment", featureKey: "exports", by: 3 },
    ]);
    expect(res.status, res.text).toBe(200);
    const results = res.body.results as { status: number; record?: { id: string; data: unknown }; created?: boolean; count?: number }[];
    expect(results.map((r) => r.status)).toEqual([201, 200, 201, 200, 204, 200]);
    expect(results[0]!.record!.data).toEqual({ title: "c" });
    expect(results[1]!.record).toMatchObject({ id: a, data: { title: "a", tags: { y: 2 } } });
    expect([results[2]!.created, results[3]!.created, results[3]!.record!.id]).toEqual([true, false, results[2]!.record!.id]);
    expect(results[3]!.record!.data).toEqual({ email: "p@example.com", n: 2 });
    expect(results[4]).toEqual({ status: 204 });
    expect(results[5]).toEqual({ status: 200, count: 3, period: "monthly", limit: null });

    expect((await api.get("notes", results[0]!.record!.id)).body.record).toEqual(results[0]!.record);
    expect((await api.get("notes", a!)).body.record.data).toEqual({ title: "a", tags: { y: 2 } });
    expectError(await api.get("notes", b!), 404, "not_found");
    expect((await api.list("people")).body.total).toBe(1);
    expect(await usage(t, tenant, "exports")).toBe(3);
  });

  it("writes nothing when operation 57 fails, and names it", async () => {
    const { t, tenant, api } = await dataBackend();
    const batch = batchClient(t, tenant);
    const [kept] = await api.seed("notes", [{ v: "before" }]);
    const ops: Op[] = Array.from({ length: 60 }, (_, i) => ({ op: "create", collection: "notes", data: { i } }));
    ops[3] = { op: "increment", featureKey: "exports" };
    ops[10] = { op: "update", collection: "notes", id: kept, data: { v: "after" } };
    ops[20] = { op: "delete", collection: "notes", id: kept };
    ops[57] = { op: "update", collection: "notes", id: "rec_nope", data: { v: 1 } };
    const res = await batch(ops);
    expectError(res, 404, "not_found");
    expect(res.body.message).toMatch(/^operations\[57\] \(update notes\/rec_nope\) failed, so nothing of the batch was written: No record rec_nope/);
    const list = await api.list("notes");
    expect([list.body.total, list.body.records[0].data]).toEqual([1, { v: "before" }]);
    expect(await usage(t, tenant, "exports")).toBe(0);
  });

  it("refuses 101 operations, an empty batch and an unknown op, each with a clear message", async () => {
    const { t, tenant } = await dataBackend();
    const batch = batchClient(t, tenant);
    const many = await batch(Array.from({ length: 101 }, () => ({ op: "create", collection: "notes", data: {} })));
    expectError(many, 400, "invalid_request");
    expect(many.body.message).toMatch(/at most 100 operations/);
    expectError(await batch([]), 400, "invalid_request");
    const unknown = await batch([{ op: "replace", collection: "notes", data: {} }]);
    expectError(unknown, 400, "invalid_request");
    expect(unknown.body.message).toMatch(/op must be create, update, upsert, delete or increment/);
    const badData = await batch([{ op: "create", collection: "notes", data: {} }, { op: "create", collection: "no-tes", data: {} }]);
    expectError(badData, 400, "invalid_request");
    expect(badData.body.message).toMatch(/^operations\[1\] \(create no-tes\)/);
  });

  it("cannot reach another tenant's records: the operation is 404 and nothing is written", async () => {
    const { t, tenant, api } = await dataBackend();
    const [mine] = await api.seed("notes", [{ v: 1 }]);
    const intruder = await signupTenant(t);
    const res = await batchClient(t, intruder)([
      { op: "create", collection: "notes", data: { v: "x" } },
      { op: "delete", collection: "notes", id: mine },
    ]);
    expectError(res, 404, "not_found");
    expect(res.body.message).toMatch(/^operations\[1\]/);
    expect((await dataClient(t, intruder).list("notes")).body.total).toBe(0);
    expect((await api.get("notes", mine!)).status).toBe(200);
    expect(tenant.id).not.toBe(intruder.id);
  });

  it("checks unique fields against the batch's own earlier writes (409 names the operation)", async () => {
    const { t, tenant, api } = await dataBackend({ people: { unique: ["email"] } });
    const res = await batchClient(t, tenant)([
      { op: "create", collection: "people", data: { email: "a@example.com" } },
      { op: "create", collection: "people", data: { email: "a@example.com" } },
    ]);
    expectError(res, 409, "conflict");
    expect(res.body.message).toMatch(/^operations\[1\] \(create people\) failed/);
    expect((await api.list("people")).body.total).toBe(0);
  });

  it("counts every create against the record quota, in order, and leaves the count exact after a rollback", async () => {
    const { t, tenant, api } = await dataBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { records: 3 } } });
    const batch = batchClient(t, tenant);
    const [first] = await api.seed("notes", [{ i: 1 }, { i: 2 }]);
    const over = await batch([
      { op: "create", collection: "notes", data: { i: 3 } },
      { op: "create", collection: "notes", data: { i: 4 } },
    ]);
    expectError(over, 402, "limit_reached");
    expect(over.body.message).toMatch(/^operations\[1\]/);
    // A delete earlier in the batch makes room, as it would for single calls in that order.
    const fits = await batch([
      { op: "delete", collection: "notes", id: first },
      { op: "create", collection: "notes", data: { i: 3 } },
      { op: "create", collection: "notes", data: { i: 4 } },
    ]);
    expect(fits.status, fits.text).toBe(200);
    expectError(await api.create("notes", { i: 5 }), 402, "limit_reached");
    const rolledBack = await batch([
      { op: "delete", collection: "notes", id: fits.body.results[1].record.id },
      { op: "create", collection: "notes", data: { i: 6 } },
      { op: "update", collection: "notes", id: "rec_nope", data: {} },
    ]);
    expectError(rolledBack, 404, "not_found");
    // Still exactly 3 records: one more is refused, one after a delete fits.
    expectError(await api.create("notes", { i: 7 }), 402, "limit_reached");
    await api.remove("notes", fits.body.results[1].record.id);
    expect((await api.create("notes", { i: 8 })).status).toBe(201);
  });

  it("a batch of 100 creates answers each in order, and one passing the quota at operation 57 writes none", async () => {
    const { t, tenant, api } = await dataBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { records: 160 } } });
    const batch = batchClient(t, tenant);
    const creates = (from: number) => Array.from({ length: 100 }, (_, i) => ({ op: "create", collection: i % 2 ? "notes" : "tasks", data: { i: from + i } }));
    const ok = await batch(creates(0));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.results.map((r: { record: { data: { i: number } } }) => r.record.data.i)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    const listed = (await api.list("tasks", { limit: 100 })).body;
    expect(listed.total).toBe(50);
    expect(listed.records.map((r: { id: string }) => r.id).sort()).toEqual(ok.body.results.filter((_: unknown, i: number) => i % 2 === 0).map((r: { record: { id: string } }) => r.record.id).sort());
    // 100 held, cap 160: operations 0..59 fit, so operation 60 is the first refused...
    const over = await batch(creates(100));
    expectError(over, 402, "limit_reached");
    expect(over.body.message).toMatch(/^operations\[60\]/);
    // ...and with 3 more held, operation 57.
    await api.seed("notes", [{}, {}, {}]);
    const over57 = await batch(creates(100));
    expect(over57.body.message).toMatch(/^operations\[57\]/);
    expect((await api.list("notes")).body.total + (await api.list("tasks")).body.total).toBe(103);
  });

  it("counts increments against their usage limit, several of one feature included", async () => {
    const { t, tenant } = await dataBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { billing: { defaultEntitlements: { exports: 5 } } } });
    const batch = batchClient(t, tenant);
    const ok = await batch([
      { op: "increment", featureKey: "exports", by: 2 },
      { op: "increment", featureKey: "exports", by: 2 },
    ]);
    expect(ok.body.results.map((r: { count: number; limit: number }) => [r.count, r.limit])).toEqual([
      [2, 5],
      [4, 5],
    ]);
    const over = await batch([
      { op: "create", collection: "notes", data: {} },
      { op: "increment", featureKey: "exports", by: 1 },
      { op: "increment", featureKey: "exports", by: 1 },
    ]);
    expectError(over, 402, "limit_reached");
    expect(over.body.message).toMatch(/^operations\[2\] \(increment exports\)/);
    expect(await usage(t, tenant, "exports")).toBe(4);
    expect((await dataClient(t, tenant).list("notes")).body.total).toBe(0);
  });
});

describe("Idempotency-Key", () => {
  it("answers a retried create with the first answer and writes once; another body with the key is 409", async () => {
    const { t, tenant, api } = await dataBackend();
    const send = (data: unknown, key = "key-1") => t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data }, headers: { "idempotency-key": key } });
    const first = await send({ title: "a" });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const retry = await send({ title: "a" });
    expect([retry.status, retry.body, retry.headers.get("idempotent-replayed")]).toEqual([201, first.body, "true"]);
    expect((await api.list("notes")).body.total).toBe(1);
    const other = await send({ title: "b" });
    expectError(other, 409, "conflict");
    expect(other.body.message).toMatch(/Idempotency-Key was used .* for another request/);
    // The same key on another path is another request too.
    expectError(await t.request("POST", "/api/v1/data/other", { bearer: tenant.bearer, body: { data: { title: "a" } }, headers: { "idempotency-key": "key-1" } }), 409, "conflict");
    // Keys are per tenant: another tenant's same key is its own.
    const stranger = await signupTenant(t);
    const theirs = await t.request("POST", "/api/v1/data/notes", { bearer: stranger.bearer, body: { data: { title: "a" } }, headers: { "idempotency-key": "key-1" } });
    expect(theirs.status).toBe(201);
    expect(theirs.body.record.id).not.toBe(first.body.record.id);
  });

  it("replays update, upsert, delete, increment and a batch; after 24 hours the key is free again", async () => {
    const { t, tenant, api } = await dataBackend({ people: { unique: ["email"] } });
    let bearer = tenant.bearer;
    const keyed = (method: string, path: string, key: string, body?: unknown) => t.request(method, path, { bearer, ...(body === undefined ? {} : { body }), headers: { "idempotency-key": key } });
    const [id] = await api.seed("notes", [{ n: 1 }]);
    const twice = async (method: string, path: string, key: string, body?: unknown) => {
      const a = await keyed(method, path, key, body);
      const b = await keyed(method, path, key, body);
      expect([b.status, b.text, b.headers.get("idempotent-replayed")], `${method} ${path}`).toEqual([a.status, a.text, "true"]);
      return a;
    };
    expect((await twice("PUT", `/api/v1/data/notes/${id}`, "u1", { data: { n: 2 } })).body.record.data).toEqual({ n: 2 });
    expect((await twice("POST", "/api/v1/data/people/upsert", "p1", { data: { email: "x@example.com" } })).status).toBe(201);
    expect((await twice("POST", "/api/v1/billing/usage/exports/increment", "i1", { by: 2 })).body.count).toBe(2);
    expect(await usage(t, tenant, "exports")).toBe(2);
    const batch = await twice("POST", "/api/v1/batch", "b1", { operations: [{ op: "create", collection: "notes", data: { n: 3 } }, { op: "increment", featureKey: "exports" }] });
    expect(batch.body.results.map((r: { status: number }) => r.status)).toEqual([201, 200]);
    expect(await usage(t, tenant, "exports")).toBe(3);
    // A retried delete answers 204 again instead of 404.
    expect((await twice("DELETE", `/api/v1/data/notes/${id}`, "d1")).status).toBe(204);
    expect((await api.list("notes")).body.total).toBe(1);

    t.clock.advance(24 * 3600 * 1000 + 1);
    const refreshed = await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: tenant.refreshToken } });
    bearer = { ...bearer, accessToken: refreshed.body.accessToken };
    const later = await keyed("POST", "/api/v1/billing/usage/exports/increment", "i1", { by: 2 });
    expect([later.status, later.body.count, later.headers.get("idempotent-replayed")]).toEqual([200, 5, null]);
    // Housekeeping drops the answers past 24 hours (the key in use again stays).
    const kept = (key: string) => t.backend.core.db.records.keptReply(t.app.id, tenant.id, hashToken(key), 0);
    expect([await kept("u1"), await kept("i1")].map((r) => r?.status)).toEqual([200, 200]);
    await runMaintenance(t.backend.core);
    expect([await kept("u1"), await kept("i1")].map((r) => r?.status)).toEqual([undefined, 200]);
  });

  it("lets concurrent retries of one key write once and all get the same answer", async () => {
    const { t, tenant, api } = await dataBackend();
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { v: 1 } }, headers: { "idempotency-key": "race" } })),
    );
    expect(new Set(replies.map((r) => `${r.status} ${r.text}`)).size).toBe(1);
    expect((await api.list("notes")).body.total).toBe(1);
  });

  it("is a header browsers may send, and the replay marker one they may read (CORS)", async () => {
    const { t, tenant } = await dataBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example.com"] } });
    const origin = "https://app.example.com";
    const pre = await t.request("OPTIONS", "/api/v1/batch", { headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "idempotency-key" } });
    expect(pre.headers.get("access-control-allow-headers")).toContain("idempotency-key");
    const send = () => t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: {} }, headers: { origin, "idempotency-key": "cors" } });
    await send();
    const replay = await send();
    expect([replay.headers.get("idempotent-replayed"), replay.headers.get("access-control-expose-headers")]).toEqual(["true", expect.stringContaining("idempotent-replayed")]);
  });

  it("keeps no answer for a failed write, and refuses a malformed key", async () => {
    const { t, tenant, api } = await dataBackend();
    const send = (key: string) => t.request("PUT", "/api/v1/data/notes/rec_nope", { bearer: tenant.bearer, body: { data: { v: 1 } }, headers: { "idempotency-key": key } });
    expectError(await send("k"), 404, "not_found");
    expectError(await send("k"), 404, "not_found");
    for (const bad of ["has space", "x".repeat(256), "é"]) {
      expectError(await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: {} }, headers: { "idempotency-key": bad } }), 400, "invalid_request");
    }
    expect((await api.list("notes")).body.total).toBe(0);
  });
});
