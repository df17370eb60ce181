import { describe, expect, it } from "vitest";
import { dataBackend } from "./data-helpers.ts";
import { serveHttp } from "./_helpers.ts";

// Values whose JSON text is easy to get wrong when record replies are assembled from the
// stored text instead of serialized from objects.
const TRICKY = {
  text: 'quote " backslash \\ slash / </script> tab \t newline \n',
  unicode: "é 漢字 😀 \u2028 \u2029 \u0001",
  numbers: [0, -1, 1.5, 1e21, -2.5e-7, Number.MAX_SAFE_INTEGER],
  nested: { deep: { deeper: [null, true, false, {}, []] } },
  "key with spaces and \"quotes\"": 1,
  ["__proto__"]: { polluted: true },
};

describe("record replies", () => {
  it("every data reply parses to the same record the API stored, with the same headers as any JSON reply", async () => {
    const { t, api, tenant } = await dataBackend({ things: { unique: ["slug"] } });
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example"] } });
    const data = JSON.parse(JSON.stringify({ slug: "a", ...TRICKY })) as Record<string, unknown>;
    expect(Object.keys(data)).toContain("__proto__");

    const created = await api.create("things", data);
    expect(created.status).toBe(201);
    const record = created.body.record;
    expect(record).toEqual({ id: expect.stringMatching(/^rec_/), data, createdAt: new Date(t.clock()).toISOString(), updatedAt: new Date(t.clock()).toISOString() });
    expect(Object.keys(record.data)).toContain("__proto__");

    t.clock.advance(1000);
    const updated = await api.update("things", record.id, { text: "changed" });
    expect(updated.body).toEqual({ record: { ...record, data: { ...data, text: "changed" }, updatedAt: new Date(t.clock()).toISOString() } });
    const current = updated.body.record;

    expect((await api.get("things", record.id)).body).toEqual({ record: current });
    expect((await api.list("things")).body).toEqual({ records: [current], total: 1, limit: 50, offset: 0 });
    const again = await api.upsert("things", { slug: "a", n: 2 });
    expect({ status: again.status, body: again.body }).toEqual({ status: 200, body: { record: { ...current, data: { ...current.data, n: 2 } }, created: false } });
    const fresh = await api.upsert("things", { slug: "b" });
    expect({ status: fresh.status, created: fresh.body.created, data: fresh.body.record.data }).toEqual({ status: 201, created: true, data: { slug: "b" } });
    expect((await api.list("things", { limit: 1, offset: 1, sort: { createdAt: 1 } })).body).toMatchObject({ records: [{ data: { slug: "b" } }], total: 2, limit: 1, offset: 1 });

    // Over real HTTP, from the app's browser origin: the headers of any JSON reply.
    const { url } = await serveHttp(t.backend);
    for (const path of ["/api/v1/data/things", `/api/v1/data/things/${record.id}`]) {
      const res = await fetch(`${url}${path}`, {
        headers: { authorization: `Bearer ${tenant.bearer.accessToken}`, "x-service-app": t.app.id, origin: "https://app.example", "x-request-id": "reply-1" },
      });
      expect({
        status: res.status,
        type: res.headers.get("content-type"),
        cors: res.headers.get("access-control-allow-origin"),
        requestId: res.headers.get("x-request-id"),
      }).toEqual({ status: 200, type: "application/json;charset=UTF-8", cors: "https://app.example", requestId: "reply-1" });
      expect(JSON.parse(await res.text())).toBeTruthy();
    }
  });
});
