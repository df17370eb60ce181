import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { dataBackend } from "./data-helpers.ts";
import { storeRows } from "./_store.ts";

// List totals are counted once per filter and kept until a write (src/db/sqlite/records-totals.ts
// on SQLite; PostgreSQL counts every page): on either engine they must stay exact.
describe("list totals", () => {
  it("stay exact across pages while the tenant writes, and when another process writes", async () => {
    const b = await dataBackend();
    const ids0 = await b.api.seed("items", Array.from({ length: 6 }, (_, i) => ({ open: i % 2 === 0 })));
    const total = async (offset = 0) => (await b.api.list("items", { filter: { open: true }, limit: 2, offset })).body.total;
    expect(await total()).toBe(3);
    expect(await total(2)).toBe(3);

    // Writes through the API: create, update out of the filter, delete, upsert.
    await b.api.create("items", { open: true });
    expect(await total(2)).toBe(4);
    await b.api.update("items", ids0[0]!, { open: false });
    expect(await total()).toBe(3);
    await b.api.remove("items", ids0[2]!);
    expect(await total(2)).toBe(2);

    // Another connection (the CLI, a second process) inserts and deletes straight in the store.
    const insert = "INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at) VALUES ('rec_other', ?, ?, 'items', '{\"open\":true}', 1, 1)";
    if (b.t.backend.core.engine === "sqlite") {
      const other = new Database(join(b.t.dataDir, "tenantd.db"));
      try {
        other.prepare(insert).run(b.t.app.id, b.tenant.id);
        expect(await total(2)).toBe(3);
        other.prepare("DELETE FROM records WHERE tenant_id = ? AND json_extract(data, '$.open') = 1").run(b.tenant.id);
        expect(await total()).toBe(0);
      } finally {
        other.close();
      }
    } else {
      const other = storeRows(b.t.backend);
      await other.run(insert, b.t.app.id, b.tenant.id);
      expect(await total(2)).toBe(3);
      await other.run("DELETE FROM records WHERE tenant_id = ? AND doc -> 'open' = 'true'::jsonb", b.tenant.id);
      expect(await total()).toBe(0);
    }
    // Another tenant's writes leave this tenant's count alone, and its own count is its own.
    const { signupTenant } = await import("./_helpers.ts");
    const t2 = await signupTenant(b.t);
    await b.t.request("POST", "/api/v1/data/items", { bearer: t2.bearer, body: { data: { open: true } } });
    expect(await total()).toBe(0);
    expect((await b.t.request("GET", `/api/v1/data/items?filter=${encodeURIComponent('{"open":true}')}`, { bearer: t2.bearer })).body.total).toBe(1);
  });

  it("stay exact on full pages whose total was remembered, when another process writes, and past the last page", async () => {
    const b = await dataBackend();
    await b.api.seed("items", Array.from({ length: 5 }, () => ({ open: true })));
    const list = async (offset: number) => (await b.api.list("items", { filter: { open: true }, limit: 2, offset })).body;
    expect((await list(0)).total).toBe(5);
    expect((await list(2)).total).toBe(5);
    expect(await list(10)).toEqual({ records: [], total: 5, limit: 2, offset: 10 });
    const insert = "INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at) VALUES ('rec_other', ?, ?, 'items', '{\"open\":true}', 1, 1)";
    if (b.t.backend.core.engine === "sqlite") {
      const other = new Database(join(b.t.dataDir, "tenantd.db"));
      try {
        other.prepare(insert).run(b.t.app.id, b.tenant.id);
      } finally {
        other.close();
      }
    } else {
      await storeRows(b.t.backend).run(insert, b.t.app.id, b.tenant.id);
    }
    // A full page (its total remembered before the insert), and an empty page past the end.
    expect((await list(0)).total).toBe(6);
    expect(await list(10)).toEqual({ records: [], total: 6, limit: 2, offset: 10 });
  });
});
