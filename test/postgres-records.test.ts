import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { parseFilter, parseSort, type KeyTerm } from "../src/data/query.ts";
import type { RecordScope } from "../src/db/types.ts";

import type { Repositories } from "../src/db/repositories.ts";
import { openDatabase } from "../src/db/sqlite/connection.ts";
import { createRepositories } from "../src/db/sqlite/index.ts";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { postgresEngine, seedApp } from "./_engines.ts";
import { recordFilterGenerator, seededRandom } from "./_random.ts";
import { QuotaReached, UniqueConflict } from "../src/db/shared.ts";

/** The clock reading `list` takes (SQLite's automatic indexes use it; PostgreSQL ignores it). */
const LIST_NOW = Date.UTC(2026, 0, 15, 12);

/**
 * Records on PostgreSQL against the SQLite implementation as the reference: the same
 * records, several hundred random filters and sorts (mixed types, missing fields, nulls,
 * nested paths, metadata), identical ids, order and totals required.
 */

const T0 = Date.UTC(2026, 0, 15, 12);
let pg: Awaited<ReturnType<typeof postgresEngine>>;
let sqliteDir: string;
let sqliteClose: () => void;
let engines: [string, Repositories][];


const SCALARS = [0, 1, -1, 2, 5, 5.5, -3.25, 10, 100, 1e6, "", "5", "1", "a", "abc", "Abc", "b", "z", "é", "Zürich", "10", true, false, null];
const OBJECTS = [{ a: 5 }, { a: "5" }, { b: 1, a: 2 }, { a: 2, b: 1 }, [], [1, 2], ["a"], [null], {}];
const PATHS = ["v", "w", "n.x", "n.y", "n", "n.x.deep", "missing"];

const { pick, randomRecord, randomCondition } = recordFilterGenerator({ scalars: SCALARS, objects: OBJECTS, paths: PATHS });

function randomSort(r: () => number): Record<string, 1 | -1> | undefined {
  if (r() < 0.25) return undefined;
  const keys = [...PATHS, "$createdAt", "$updatedAt", "$id"];
  const sort: Record<string, 1 | -1> = {};
  for (let i = 0; i < 1 + Math.floor(r() * 3); i++) sort[pick(r, keys)] = r() < 0.5 ? 1 : -1;
  return sort;
}

const RECORDS = 400;
const scope = (tenantId: string, indexed: string[] = []): RecordScope => ({ appId: "app1", tenantId, collection: "things", indexed: new Set(indexed) });
const times: number[] = [];
const ids: string[] = [];

beforeAll(async () => {
  pg = await postgresEngine();
  sqliteDir = mkdtempSync(join(tmpdir(), "tenantd-records-"));
  const sqlite = openDatabase(join(sqliteDir, "data.db"));
  sqliteClose = () => sqlite.close();
  engines = [
    ["sqlite", createRepositories(sqlite)],
    ["postgres", pg.db as Repositories],
  ];
  const r = seededRandom(7);
  const docs = Array.from({ length: RECORDS }, () => randomRecord(r));
  for (const [, db] of engines) {
    await seedApp(db, ["ten1", "ten2"], T0);
    for (let i = 0; i < RECORDS; i++) {
      // Clumps of equal creation times, so the tie-breaks are exercised.
      const at = T0 + Math.floor(i / 3) * 1000;
      await db.records.insert(scope(i % 5 === 0 ? "ten2" : "ten1"), `rec-${String(i).padStart(4, "0")}`, docs[i]!, at, [], null);
      // Some records are updated later, so updatedAt differs from createdAt.
      if (i % 7 === 0) await db.records.update(scope(i % 5 === 0 ? "ten2" : "ten1"), `rec-${String(i).padStart(4, "0")}`, (d) => ({ ...d, touched: true }), at + 500_000, []);
    }
    await db.records.syncIndexes("app1", [{ collection: "things", path: "v" }, { collection: "things", path: "n.x" }]);
  }
  for (let i = 0; i < RECORDS; i++) {
    times.push(T0 + Math.floor(i / 3) * 1000 + (i % 4 === 0 ? 500_000 : 0));
    ids.push(`rec-${String(i).padStart(4, "0")}`);
  }
});

afterAll(async () => {
  sqliteClose?.();
  if (sqliteDir) rmSync(sqliteDir, { recursive: true, force: true });
  await pg?.close();
});

describe("records on PostgreSQL match SQLite", () => {
  test("600 random filters and sorts: identical ids, order and totals", async () => {
    const r = seededRandom(42);
    const mismatches: unknown[] = [];
    let nonEmpty = 0;
    for (let i = 0; i < 600; i++) {
      const filter = Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => randomCondition(r, times, ids)));
      const sort = randomSort(r);
      const indexed = r() < 0.5 ? ["v", "n.x"] : [];
      const page = { limit: r() < 0.7 ? 1000 : 1 + Math.floor(r() * 30), offset: r() < 0.7 ? 0 : Math.floor(r() * 40), maxBytes: 8 * 1024 * 1024, maxRecordBytes: 1024 * 1024 };
      const conditions = parseFilter(JSON.stringify(filter));
      const sortKeys = parseSort(sort && JSON.stringify(sort));
      const [a, b] = await Promise.all(engines.map(([, db]) => db.records.list(scope("ten1", indexed), conditions, sortKeys, page, LIST_NOW)));
      const idsA = a!.records.map((x) => x.id);
      const idsB = b!.records.map((x) => x.id);
      if (a!.total > 0) nonEmpty++;
      if (a!.total !== b!.total || JSON.stringify(idsA) !== JSON.stringify(idsB) || JSON.stringify(a!.records.map((x) => x.data)) !== JSON.stringify(b!.records.map((x) => x.data))) {
        mismatches.push({ filter, sort, indexed, page, sqlite: { total: a!.total, ids: idsA.slice(0, 12) }, postgres: { total: b!.total, ids: idsB.slice(0, 12) } });
      }
    }
    expect(mismatches.slice(0, 3)).toEqual([]);
    expect(mismatches).toHaveLength(0);
    // The generator is not degenerate: most filters match something.
    expect(nonEmpty).toBeGreaterThan(300);
    // 1,200 list queries: seconds on a quiet machine, more on a loaded CI runner.
  }, 180_000);

  test("an $in on an indexed field pages by offset and by cursor as one list does, on both engines", async () => {
    // PostgreSQL reads such a page value by value from the field's index (inBranches):
    // duplicates, nulls, mixed types and both directions must not change a page.
    const filters = [
      { v: { $in: [5, "abc", true, null, 5, 5.0] } },
      { v: { $in: [1, "1", 0, false] }, w: { $ne: null } },
      { "n.x": { $in: ["a", "b", "z", 10, { a: 5 }] } },
      { v: { $in: [2, 5, 10, 100, "5", "a", "b"] }, $createdAt: { $gte: new Date(T0 + 20_000).toISOString() } },
    ];
    const keyOf = (r: { createdAt: number; seq: number }, dir: 1 | -1): KeyTerm[] => [
      { target: { kind: "meta", column: "created_at" }, dir, value: r.createdAt },
      { target: { kind: "seq" }, dir, value: r.seq },
    ];
    for (const f of filters) {
      for (const sort of [undefined, { $createdAt: 1 as const }]) {
        const c = parseFilter(JSON.stringify(f));
        const sk = parseSort(sort && JSON.stringify(sort));
        const dir = sort ? 1 : -1;
        const all = { limit: 1000, offset: 0, maxBytes: 1e7, maxRecordBytes: 1024 * 1024 };
        const whole = await Promise.all(engines.map(([, db]) => db.records.list(scope("ten1", ["v", "n.x"]), c, sk, all, LIST_NOW)));
        const expected = whole[0]!.records.map((x) => x.id);
        expect(expected.length, JSON.stringify(f)).toBeGreaterThan(7);
        expect(whole[1]!.records.map((x) => x.id), JSON.stringify({ f, sort })).toEqual(expected);
        for (const [name, db] of engines) {
          const byOffset: string[] = [];
          const byCursor: string[] = [];
          let after: KeyTerm[] | undefined;
          for (let offset = 0; offset < expected.length; offset += 7) {
            const page = await db.records.list(scope("ten1", ["v", "n.x"]), c, sk, { ...all, limit: 7, offset }, LIST_NOW);
            expect(page.total).toBe(expected.length);
            byOffset.push(...page.records.map((x) => x.id));
            const next = await db.records.list(scope("ten1", ["v", "n.x"]), c, sk, { ...all, limit: 7, after }, LIST_NOW);
            byCursor.push(...next.records.map((x) => x.id));
            after = keyOf(next.records.at(-1)!, dir);
          }
          expect({ name, f, sort, byOffset }).toEqual({ name, f, sort, byOffset: expected });
          expect({ name, f, sort, byCursor }).toEqual({ name, f, sort, byCursor: expected });
        }
      }
    }
  });

  test("the semantic table of data-filter.test.ts gives the same ids on both engines", async () => {
    const filters = [
      { v: 5 }, { v: "5" }, { v: true }, { v: 1 }, { v: { $eq: 0 } }, { v: false }, { v: null }, { v: { $ne: null } }, { v: { $ne: 5 } },
      { v: { $gt: 1 } }, { v: { $gte: 0, $lt: 5 } }, { v: { $gt: "4" } }, { v: { $lt: "a" } }, { v: { $gt: false } }, { v: { $gte: null } },
      { v: { $lte: null } }, { v: { $gt: null } }, { v: { $in: [5, "abc", true, null] } }, { v: { $in: [1, "5"] } }, { v: { $in: [] } },
      { v: { $eq: { a: 5 } } }, { v: { $eq: { b: 1, a: 2 } } }, { v: { $eq: [1, 2] } }, { "v.a": 5 }, { "n.x": null }, { "n.x": { $ne: "a" } },
    ];
    for (const f of filters) {
      const c = parseFilter(JSON.stringify(f));
      const [a, b] = await Promise.all(engines.map(([, db]) => db.records.list(scope("ten1"), c, parseSort(undefined), { limit: 1000, offset: 0, maxBytes: 1e7, maxRecordBytes: 1024 * 1024 }, LIST_NOW)));
      expect({ f, ids: b!.records.map((x) => x.id), total: b!.total }).toEqual({ f, ids: a!.records.map((x) => x.id), total: a!.total });
    }
  });
});

describe("records on PostgreSQL", () => {
  test("record data keeps its key order and bytes", async () => {
    const data = { zeta: 1, alpha: { b: 2, a: [3, { y: 1, x: 0 }] }, "ü": "é", n: 1.5 };
    const row = await pg.db.records.insert(scope("ten2"), "rec-order", data, T0, [], null);
    expect(row.data).toBe(JSON.stringify(data));
    expect((await pg.db.records.get(scope("ten2"), "rec-order"))?.data).toBe(JSON.stringify(data));
  });

  test("unique fields: concurrent inserts and upserts of one value keep one record per tenant", async () => {
    const s = scope("ten2");
    const results = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => pg.db.records.insert(s, `u-${i}`, { email: "same@x.io" }, T0, ["email"], null)));
    expect(results.filter((x) => x.status === "fulfilled")).toHaveLength(1);
    for (const x of results) if (x.status === "rejected") expect(x.reason).toBeInstanceOf(UniqueConflict);
    // Another tenant's value is invisible.
    await expect(pg.db.records.insert(scope("ten1"), "u-other", { email: "same@x.io" }, T0, ["email"], null)).resolves.toMatchObject({ id: "u-other" });
    const ups = await Promise.all(
      Array.from({ length: 12 }, (_, i) => pg.db.records.upsert(s, { field: "sku", value: "A-1" }, `up-${i}`, { sku: "A-1", n: i }, (d) => ({ ...d, hits: Number(d.hits ?? 0) + 1 }), T0, ["sku"], null)),
    );
    expect(ups.filter((u) => u.created)).toHaveLength(1);
    const all = await pg.db.records.list(s, parseFilter(JSON.stringify({ sku: "A-1" })), parseSort(undefined), { limit: 100, offset: 0, maxBytes: 1e7, maxRecordBytes: 1024 * 1024 }, LIST_NOW);
    expect(all.total).toBe(1);
    expect(JSON.parse(all.records[0]!.data).hits).toBe(11);

    // Upserts of the record that now exists write over the version they read, without a
    // transaction: none is lost, growing under a byte cap too (the gate in the same statement).
    const grow = (i: number) => (d: Record<string, unknown>) => ({ ...d, [`f${i}`]: "x".repeat(i), hits: Number(d.hits ?? 0) + 1 });
    const more = await Promise.all(Array.from({ length: 24 }, (_, i) => pg.db.records.upsert(s, { field: "sku", value: "A-1" }, `up2-${i}`, { sku: "A-1" }, grow(i), T0, ["sku"], null, 10_000_000)));
    expect(more.every((u) => !u.created)).toBe(true);
    const after = JSON.parse((await pg.db.records.get(s, all.records[0]!.id))!.data);
    expect(after.hits).toBe(35);
    expect(Object.keys(after).filter((k) => k.startsWith("f"))).toHaveLength(24);
    // Past the tenant's byte cap: refused, the record as it was.
    await expect(pg.db.records.upsert(s, { field: "sku", value: "A-1" }, "up3", { sku: "A-1" }, grow(5000), T0, ["sku"], null, 1000)).rejects.toBeInstanceOf(QuotaReached);
    expect(JSON.parse((await pg.db.records.get(s, all.records[0]!.id))!.data)).toEqual(after);
  });

  test("indexed fields get expression indexes the planner uses for equality, ranges and sorts", async () => {
    // Enough rows for an index to beat a scan: the planner decides on statistics.
    await pg.sql`INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
      SELECT 'bulk-' || g, 'app1', CASE WHEN g % 2 = 0 THEN 'ten1' ELSE 'ten2' END, 'things',
        json_build_object('v', g % 1000, 'n', json_build_object('x', 'k' || (g % 500)))::text, ${T0}::bigint + g, ${T0}::bigint + g
      FROM generate_series(1, 20000) g`;
    await pg.sql`ANALYZE records`;
    const names = (await pg.sql<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE tablename = 'records' AND indexname LIKE 'records_f_%'`).map((r) => r.indexname);
    expect(names).toHaveLength(2);
    const plan = async (filter: unknown, sort?: unknown) =>
      (await pg.db.records.explainList(scope("ten1", ["v", "n.x"]), parseFilter(JSON.stringify(filter)), parseSort(sort === undefined ? undefined : JSON.stringify(sort)))).join("\n");
    for (const [filter, sort] of [
      [{ v: 42 }, undefined],
      [{ v: { $gte: 10, $lt: 12 } }, undefined],
      [{ "n.x": "k7" }, undefined],
      [{ "n.x": { $in: ["k1", "k2"] } }, undefined],
      [{}, { v: 1 }],
      [{ v: { $gt: 990 } }, { v: -1 }],
    ] as const) {
      const p = await plan(filter, sort);
      expect(p, JSON.stringify({ filter, sort })).toMatch(/records_f_[0-9a-f]{12}_[0-9a-f]{20}/);
      if (sort) expect(p, JSON.stringify({ filter, sort })).not.toMatch(/Sort Key/);
    }
    // An $in under the default order reads each value's first matches from the index in
    // creation order (a Limit over each value's index scan), instead of every match.
    const merged = await plan({ "n.x": { $in: ["k1", "k2", "k3"] } });
    expect(merged.match(/Limit [^\n]*\n\s*->  Index Scan( Backward)? using records_f_/g), merged).toHaveLength(3);
    // Without the index setting, the same query does not name one.
    expect(await plan({ w: 42 })).not.toMatch(/records_f_/);
    // Dropping the setting drops the index.
    await pg.db.records.syncIndexes("app1", [{ collection: "things", path: "v" }]);
    expect((await pg.sql`SELECT 1 FROM pg_indexes WHERE indexname LIKE 'records_f_%'`).length).toBe(1);
    await pg.db.records.dropIndexesExcept([]);
    expect((await pg.sql`SELECT 1 FROM pg_indexes WHERE indexname LIKE 'records_f_%'`).length).toBe(0);
  });

  test("share links, removal and pages cut at the byte budget", async () => {
    const s = scope("ten2");
    await pg.db.records.insert(s, "big-1", { blob: "x".repeat(1000) }, T0, [], null);
    await pg.db.records.insert(s, "big-2", { blob: "y".repeat(1000) }, T0 + 1, [], null);
    const page = await pg.db.records.list(s, parseFilter('{"blob":{"$gt":""}}'), parseSort(undefined), { limit: 10, offset: 0, maxBytes: 1500, maxRecordBytes: 1024 * 1024 }, LIST_NOW);
    expect(page.records.map((x) => x.id)).toEqual(["big-2"]);
    expect(page.total).toBe(2);
    expect(await pg.db.records.createShareLink(s, "big-1", { id: "sh1", createdAt: T0, expiresAt: null }, "th1", 100)).toBe(true);
    expect(await pg.db.records.createShareLink(scope("ten1"), "big-1", { id: "sh2", createdAt: T0, expiresAt: null }, "th2", 100)).toBe(false);
    expect((await pg.db.records.findShared("th1"))?.record.id).toBe("big-1");
    expect(await pg.db.records.revokeShareLinks(s, "big-1")).toBe(1);
    expect(await pg.db.records.findShared("th1")).toBeUndefined();
    expect(await pg.db.records.remove(scope("ten1"), "big-1")).toBe(false);
    expect(await pg.db.records.remove(s, "big-1")).toBe(true);
    expect(await pg.db.records.get(s, "big-1")).toBeUndefined();
  });
});
