import { describe, expect, it } from "vitest";
import { createTenantBackend } from "../src/index.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";
import { recordScope } from "../src/data/records.ts";
import { appIndexSync } from "../src/data/install.ts";
import type { TenantAuth } from "../src/http/guards.ts";
import { signupTenant, TEST_ARGON2 } from "./_helpers.ts";
import { dataBackend } from "./data-helpers.ts";
import { testStoreConfig } from "./_postgres.ts";
import { storeRows } from "./_store.ts";

type Backend = Awaited<ReturnType<typeof dataBackend>>;

/**
 * The app's complete declared indexes. SQLite builds them beside the table in chunks after the
 * settings change (record-field-index.ts): they are read once the builds are done.
 */
async function fieldIndexes(b: Backend): Promise<string[]> {
  if (b.t.backend.core.engine === "sqlite") {
    await b.t.backend.core.db.records.autoIndexesSettled();
    return storeRows(b.t.backend).column<string>("SELECT app_id || ':' || collection || '.' || path FROM record_field_indexes WHERE declared = 1 AND build_to IS NULL ORDER BY 1");
  }
  return storeRows(b.t.backend).column<string>("SELECT indexname FROM pg_indexes WHERE tablename = 'records' AND indexname LIKE 'records^_f^_%' ESCAPE '^' ORDER BY indexname");
}

/**
 * PostgreSQL plans by statistics: on a few rows it rightly reads the table whole. There, the
 * app gets enough rows (a tenth of them this tenant's, the rest another's) of every field
 * these tests filter on for an index to beat a scan. (SQLite's planner decides on the schema alone.)
 */
async function enoughRowsToPlan(b: Backend) {
  if (b.t.backend.core.engine === "sqlite") return;
  const other = await signupTenant(b.t);
  const rows = storeRows(b.t.backend);
  await rows.run(
    `INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
     SELECT 'rec_bulk_' || g, ?, CASE WHEN g % 10 = 0 THEN ? ELSE ? END, 'items',
       json_build_object('score', g % 1000, 'rank', g % 1000, 'slug', 's' || g, 'owner', json_build_object('name', 'n' || (g % 500)))::text, ?::bigint - g, ?::bigint - g
     FROM generate_series(1, 20000) g`,
    b.t.app.id,
    b.tenant.id,
    other.id,
    b.t.clock(),
    b.t.clock(),
  );
  await rows.run("ANALYZE records");
}

/**
 * The plan reads through the named index (each engine's wording), in the order asked when
 * `sorted`. On SQLite every per-field index is entries of record_field_entries, searched first.
 */
function expectIndexUse(b: Backend, plan: string, index: RegExp | string, opts: { sorted?: boolean } = {}) {
  if (b.t.backend.core.engine === "sqlite") {
    expect(plan).toMatch(index === "records_list" ? "USING INDEX records_list" : /^SEARCH e USING (COVERING )?INDEX record_field_entries_value \(ix=\? AND rec_tenant=\?/);
    if (opts.sorted) expect(plan).not.toContain("TEMP B-TREE");
  } else {
    expect(plan).toMatch(typeof index === "string" ? new RegExp(`(Scan|Scan Backward) using ${index}|Index Scan on ${index}`) : new RegExp(`using ${index.source}|on ${index.source}`));
    if (opts.sorted) expect(plan, plan).not.toContain("Sort");
  }
}

async function plan(b: Backend, filter?: unknown, sort?: unknown): Promise<string> {
  const core = b.t.backend.core;
  const app = (await core.db.apps.findById(b.t.app.id))!;
  const { scope } = recordScope({ app, tenantId: b.tenant.id } as TenantAuth, "items");
  const detail = await core.db.records.explainList(scope, parseFilter(filter === undefined ? undefined : JSON.stringify(filter)), parseSort(sort === undefined ? undefined : JSON.stringify(sort)));
  return detail.join("\n");
}

describe("indexed fields", () => {
  it("filters and sorts on an indexed field through its expression index (EXPLAIN QUERY PLAN; EXPLAIN on PostgreSQL)", async () => {
    const b = await dataBackend({ items: { indexed: ["score", "owner.name"], unique: ["slug"] } });
    await b.api.seed("items", [{ score: 1, slug: "a" }, { score: 2, slug: "b" }]);
    expect(await fieldIndexes(b)).toHaveLength(3);
    await enoughRowsToPlan(b);
    const sqlite = b.t.backend.core.engine === "sqlite";

    // Equality, newest first: the index yields matches already in order (on PostgreSQL the
    // planner may still sort the few matches it expects, so only the index is asked there).
    const eq = await plan(b, { score: 5 });
    if (sqlite) expect(eq).toMatch(/SEARCH e USING COVERING INDEX record_field_entries_value \(ix=\? AND rec_tenant=\? AND rank=\? AND value=\?\)\nSEARCH r USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    expectIndexUse(b, eq, /records_f_\w+/, { sorted: sqlite });

    // A range with another order still reads only matching rows through the index, then sorts them.
    const rangeNewest = await plan(b, { score: { $gt: 3 } });
    if (sqlite) expect(rangeNewest).toMatch(/USING COVERING INDEX record_field_entries_value \(.*value>\?\)/);
    else expectIndexUse(b, await plan(b, { score: { $gt: 997 } }), /records_f_\w+/);
    const inSlug = await plan(b, { score: { $in: [1, 2] } }, { slug: 1 });
    if (sqlite) expect(inSlug).toMatch(/USING COVERING INDEX record_field_entries_value \(.*rank=\? AND value=\?\)/);
    expectIndexUse(b, inSlug, /records_f_\w+/);

    // An $in, newest first: each value's entries are read in order, as far as the page needs.
    const inNewest = await plan(b, { score: { $in: [1, 2, 3] } });
    if (sqlite) expect(inNewest.match(/SEARCH e USING COVERING INDEX record_field_entries_value \(ix=\? AND rec_tenant=\? AND rank=\? AND value=\?\)/g), inNewest).toHaveLength(3);
    // (Each branch's few rows are sorted for the merge; the matches themselves are not.)
    if (sqlite) expect(inNewest).not.toMatch(/SEARCH r USING INTEGER PRIMARY KEY \(rowid=\?\)\nUSE TEMP B-TREE/);
    else expect(inNewest.match(/Limit [^\n]*\n\s*->  Index Scan( Backward)? using records_f_/g), inNewest).toHaveLength(3);

    const range = await plan(b, { score: { $gte: 3, $lt: 9 } }, { score: -1 });
    if (sqlite) expect(range).toMatch(/USING COVERING INDEX record_field_entries_value \(ix=\? AND rec_tenant=\? AND rank=\? AND value>\? AND value<\?\)/);
    expectIndexUse(b, range, /records_f_\w+/, { sorted: true });

    expectIndexUse(b, await plan(b, undefined, { score: 1 }), /records_f_\w+/, { sorted: true });

    const owner = await plan(b, { "owner.name": "x" });
    const slug = await plan(b, { slug: "a" });
    if (sqlite) for (const p of [owner, slug]) expect(p).toMatch(/USING COVERING INDEX record_field_entries_value \(.*rank=\? AND value=\?\)/);
    for (const p of [owner, slug]) expectIndexUse(b, p, /records_f_\w+/);
  });

  it("a settings change made while an older sync of the app still runs keeps its new indexes", async () => {
    const b = await dataBackend({});
    const { core } = b.t.backend;
    const appId = b.t.app.id;
    const records = core.db.records;
    const syncIndexes = records.syncIndexes.bind(records);
    let calls = 0;
    // The first sync (as the startup one, slow under load) reaches the store only once the
    // settings change below is committed.
    records.syncIndexes = async (id, fields) => {
      if (calls++ === 0) while (!(await core.db.apps.findById(id))?.settings.collections.items) await new Promise((r) => setTimeout(r, 5));
      return syncIndexes(id, fields);
    };
    const older = appIndexSync(core)(appId);
    await b.t.backend.admin.updateApp(appId, { settings: { collections: { items: { indexed: ["score", "owner.name"], unique: ["slug"] } } } });
    await older;
    expect(calls).toBe(2);
    expect(await fieldIndexes(b)).toHaveLength(3);
  });

  it("lists by newest first and filters unindexed fields through the tenant's own rows", async () => {
    const b = await dataBackend({ items: { indexed: ["score"] } });
    await enoughRowsToPlan(b);
    const byDefault = await plan(b);
    if (b.t.backend.core.engine === "sqlite") expect(byDefault).toMatch(/SEARCH records USING INDEX records_list \(tenant_id=\? AND app_id=\? AND collection=\?\)/);
    expectIndexUse(b, byDefault, "records_list", { sorted: true });
    const other = await plan(b, { other: 1 });
    if (b.t.backend.core.engine === "sqlite") expect(other).toMatch(/USING INDEX records_list \(tenant_id=\? AND app_id=\? AND collection=\?\)/);
    else {
      // PostgreSQL may reach the tenant's rows through any index that leads with the tenant.
      expect(other, other).not.toContain("Seq Scan");
      expect(other, other).toMatch(/Index Cond: \(+tenant_id = /);
    }
  });

  it("builds and drops indexes when settings change, at startup, and when the app goes", async () => {
    const b = await dataBackend({ items: { indexed: ["score"] } });
    const admin = b.t.backend.admin;
    expect(await fieldIndexes(b)).toHaveLength(1);
    await admin.updateApp(b.t.app.id, { settings: { collections: { items: { indexed: ["score", "rank"] }, other: { unique: ["code"] } } } });
    expect(await fieldIndexes(b)).toHaveLength(3);
    await admin.updateApp(b.t.app.id, { settings: { collections: { items: { indexed: ["rank"] }, other: null } } });
    const left = await fieldIndexes(b);
    expect(left).toHaveLength(1);
    await enoughRowsToPlan(b);
    expectIndexUse(b, await plan(b, { rank: 1 }), left[0]!);

    // A second app's indexes are its own.
    const second = await admin.createApp({ name: "second", settings: { collections: { items: { indexed: ["score"] } } } });
    expect(await fieldIndexes(b)).toHaveLength(2);
    await admin.deleteApp(second.id);
    expect(await fieldIndexes(b)).toEqual(left);

    // An index lost (or a stale one left behind) is repaired at the next start.
    const rows = storeRows(b.t.backend);
    await rows.run(rows.engine === "sqlite" ? "DELETE FROM record_field_indexes WHERE path = 'rank'" : `DROP INDEX "${left[0]}"`);
    await rows.run(
      rows.engine === "sqlite"
        ? `CREATE INDEX records_f_000000000000_00000000000000000000 ON records (app_id, json_extract(data, '$."x"'))`
        : `CREATE INDEX records_f_000000000000_00000000000000000000 ON records (app_id, (doc -> 'x'))`,
    );
    // Closing waits for the startup sync, so no timing is involved.
    const store = (await testStoreConfig(b.t.dataDir)).config;
    const again = await createTenantBackend({ dataDir: b.t.dataDir, logger: "silent", argon2: TEST_ARGON2, ...store });
    await again.close();
    expect(await fieldIndexes(b)).toEqual(left);
    if (rows.engine === "sqlite") {
      // The old index's entries went with it, and so did the expression index from before schema 17.
      expect(await rows.value("SELECT COUNT(DISTINCT ix) FROM record_field_entries")).toBeLessThanOrEqual(1);
      expect(await rows.column("SELECT name FROM sqlite_master WHERE name LIKE 'records^_f^_%' ESCAPE '^'")).toEqual([]);
      expect(await rows.value("SELECT COUNT(*) FROM record_field_drops")).toBe(0);
    }
  });

  it("answers the same with and without an index on a larger collection", async () => {
    const rows = Array.from({ length: 200 }, (_, i) => ({ score: i % 7 === 0 ? String(i % 10) : i % 10, flag: i % 3 === 0 }));
    const results = [];
    for (const settings of [{}, { items: { indexed: ["score", "flag"] } }] as Record<string, { indexed: string[] }>[]) {
      const b = await dataBackend(settings);
      const ids = await b.api.seed("items", rows);
      const pick = async (filter: unknown, sort: unknown) =>
        (await b.api.list("items", { filter, sort, limit: 1000 })).body.records.map((r: { id: string }) => ids.indexOf(r.id));
      results.push([
        await pick({ score: { $gte: 3, $lt: 6 } }, { score: -1 }),
        await pick({ score: "7" }, { $createdAt: 1 }),
        await pick({ flag: true, score: { $in: [1, "0", 2] } }, { score: 1, flag: -1 }),
        await pick({}, { flag: 1, score: -1 }),
        await pick({ score: { $in: [1, "0", 2, 1, null] } }, undefined),
        await pick({ score: { $in: [3, 4, "7"] }, flag: false }, { $createdAt: 1 }),
      ]);
      // An $in on an indexed field is read value by value on both engines (shared.ts
      // inBranches): pages by offset and by cursor tile the one-page answer.
      for (const sort of [undefined, { $createdAt: 1 }]) {
        const filter = { score: { $in: [1, "0", 2, 9] } };
        const whole = await pick(filter, sort);
        const byOffset: number[] = [];
        const byCursor: number[] = [];
        let after: string | undefined;
        for (let offset = 0; offset < whole.length; offset += 9) {
          const page = (await b.api.list("items", { filter, sort, limit: 9, offset })).body;
          expect(page.total).toBe(whole.length);
          byOffset.push(...page.records.map((r: { id: string }) => ids.indexOf(r.id)));
          const next = (await b.api.list("items", { filter, sort, limit: 9, after })).body;
          byCursor.push(...next.records.map((r: { id: string }) => ids.indexOf(r.id)));
          after = next.next;
        }
        expect({ sort, byOffset, byCursor }).toEqual({ sort, byOffset: whole, byCursor: whole });
      }
    }
    expect(results[0]![0]!.length).toBeGreaterThan(0);
    expect(results[1]).toEqual(results[0]);
    // 400 records written through the API, one request each.
  }, 120_000);
});
