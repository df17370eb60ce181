import { describe, expect, it } from "vitest";
import { createTenantBackend } from "../src/index.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";
import { recordScope } from "../src/data/records.ts";
import type { TenantAuth } from "../src/http/guards.ts";
import { TEST_ARGON2 } from "./_helpers.ts";
import { dataBackend } from "./data-helpers.ts";

type Backend = Awaited<ReturnType<typeof dataBackend>>;

const fieldIndexes = (b: Backend) =>
  b.t.backend.core.sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name LIKE 'records^_f^_%' ESCAPE '^' ORDER BY name").pluck().all() as string[];

async function plan(b: Backend, filter?: unknown, sort?: unknown): Promise<string> {
  const core = b.t.backend.core;
  const app = (await core.db.apps.findById(b.t.app.id))!;
  const { scope } = recordScope({ app, tenantId: b.tenant.id } as TenantAuth, "items");
  const detail = await core.db.records.explainList(scope, parseFilter(filter === undefined ? undefined : JSON.stringify(filter)), parseSort(sort === undefined ? undefined : JSON.stringify(sort)));
  return detail.join("\n");
}

describe("indexed fields", () => {
  it("filters and sorts on an indexed field through its expression index (EXPLAIN QUERY PLAN)", async () => {
    const b = await dataBackend({ items: { indexed: ["score", "owner.name"], unique: ["slug"] } });
    await b.api.seed("items", [{ score: 1, slug: "a" }, { score: 2, slug: "b" }]);
    expect(fieldIndexes(b)).toHaveLength(3);

    // Equality, newest first: the index yields matches already in order.
    const eq = await plan(b, { score: 5 });
    expect(eq).toMatch(/SEARCH records USING INDEX records_f_\w+ \(app_id=\? AND tenant_id=\? AND collection=\? AND <expr>=\? AND <expr>=\?\)/);
    expect(eq).not.toContain("TEMP B-TREE");

    // A range with another order still reads only matching rows through the index, then sorts them.
    const rangeNewest = await plan(b, { score: { $gt: 3 } });
    expect(rangeNewest).toMatch(/USING INDEX records_f_\w+ \(.*<expr>>\?\)/);
    expect(await plan(b, { score: { $in: [1, 2] } }, { slug: 1 })).toMatch(/USING INDEX records_f_\w+ \(.*<expr>=\? AND <expr>=\?\)/);

    const range = await plan(b, { score: { $gte: 3, $lt: 9 } }, { score: -1 });
    expect(range).toMatch(/USING INDEX records_f_\w+ \(app_id=\? AND tenant_id=\? AND collection=\? AND <expr>=\? AND <expr>>\? AND <expr><\?\)/);
    expect(range).not.toContain("TEMP B-TREE");

    const sorted = await plan(b, undefined, { score: 1 });
    expect(sorted).toMatch(/USING INDEX records_f_\w+/);
    expect(sorted).not.toContain("TEMP B-TREE");

    expect(await plan(b, { "owner.name": "x" })).toMatch(/USING INDEX records_f_\w+ \(.*<expr>=\? AND <expr>=\?\)/);
    expect(await plan(b, { slug: "a" })).toMatch(/USING INDEX records_f_\w+ \(.*<expr>=\? AND <expr>=\?\)/);
  });

  it("lists by newest first and filters unindexed fields through the tenant's own rows", async () => {
    const b = await dataBackend({ items: { indexed: ["score"] } });
    const byDefault = await plan(b);
    expect(byDefault).toMatch(/SEARCH records USING INDEX records_list \(tenant_id=\? AND app_id=\? AND collection=\?\)/);
    expect(byDefault).not.toContain("TEMP B-TREE");
    expect(await plan(b, { other: 1 })).toMatch(/USING INDEX records_list \(tenant_id=\? AND app_id=\? AND collection=\?\)/);
  });

  it("builds and drops indexes when settings change, at startup, and when the app goes", async () => {
    const b = await dataBackend({ items: { indexed: ["score"] } });
    const admin = b.t.backend.admin;
    expect(fieldIndexes(b)).toHaveLength(1);
    await admin.updateApp(b.t.app.id, { settings: { collections: { items: { indexed: ["score", "rank"] }, other: { unique: ["code"] } } } });
    expect(fieldIndexes(b)).toHaveLength(3);
    await admin.updateApp(b.t.app.id, { settings: { collections: { items: { indexed: ["rank"] }, other: null } } });
    const left = fieldIndexes(b);
    expect(left).toHaveLength(1);
    expect(await plan(b, { rank: 1 })).toContain(`USING INDEX ${left[0]}`);

    // A second app's indexes are its own.
    const second = await admin.createApp({ name: "second", settings: { collections: { items: { indexed: ["score"] } } } });
    expect(fieldIndexes(b)).toHaveLength(2);
    await admin.deleteApp(second.id);
    expect(fieldIndexes(b)).toEqual(left);

    // An index lost (or a stale one left behind) is repaired at the next start.
    const core = b.t.backend.core;
    core.sqlite.exec(`DROP INDEX "${left[0]}"`);
    core.sqlite.exec(`CREATE INDEX records_f_000000000000_00000000000000000000 ON records (app_id, json_extract(data, '$."x"'))`);
    // Closing waits for the startup sync, so no timing is involved.
    const again = await createTenantBackend({ dataDir: b.t.dataDir, logger: "silent", argon2: TEST_ARGON2 });
    await again.close();
    expect(fieldIndexes(b)).toEqual(left);
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
      ]);
    }
    expect(results[0]![0]!.length).toBeGreaterThan(0);
    expect(results[1]).toEqual(results[0]);
  });
});
