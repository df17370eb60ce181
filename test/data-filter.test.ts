import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { dataBackend, dataClient, type DataClient } from "./data-helpers.ts";

/**
 * One record per kind of value of `v` (and of `addr.city`). The expected ids of each filter
 * are what MongoDB returns for the same query on the same documents, from its documented
 * rules: `{f: null}` matches null and missing; `$ne` matches missing; numbers, strings,
 * booleans, objects never compare across types (1 ≠ true ≠ "1"); `$gt/$lt null` match
 * nothing while `$gte/$lte null` behave like `$eq null`; a dotted path through a
 * non-object is missing.
 */
const DOCS: Record<string, Record<string, unknown>> = {
  A: { v: 5, addr: { city: "Oslo" } },
  B: { v: "5", addr: { city: "oslo" } },
  C: { v: true, addr: "Oslo" },
  D: { v: 1, addr: { city: null } },
  E: { v: null, addr: {} },
  F: {},
  G: { v: false },
  H: { v: 0 },
  I: { v: 5.5 },
  J: { v: "abc" },
  K: { v: { a: 5 } },
};
const ALL = Object.keys(DOCS);
const except = (...names: string[]) => ALL.filter((n) => !names.includes(n));

const SEMANTICS: [string, unknown, string[]][] = [
  ["implicit $eq on a number", { v: 5 }, ["A"]],
  ["a numeric string is not the number", { v: "5" }, ["B"]],
  ["true is not 1", { v: true }, ["C"]],
  ["1 is not true", { v: 1 }, ["D"]],
  ["0 is not false", { v: { $eq: 0 } }, ["H"]],
  ["false is not 0", { v: false }, ["G"]],
  ["null matches null and missing", { v: null }, ["E", "F"]],
  ["$ne null excludes null and missing", { v: { $ne: null } }, except("E", "F")],
  ["$ne matches missing fields", { v: { $ne: 5 } }, except("A")],
  ["$ne on a string keeps the number", { v: { $ne: "5" } }, except("B")],
  ["$gt on numbers ignores strings and booleans", { v: { $gt: 1 } }, ["A", "I"]],
  ["range on numbers ignores false", { v: { $gte: 0, $lt: 5 } }, ["D", "H"]],
  ["$gt on strings ignores numbers", { v: { $gt: "4" } }, ["B", "J"]],
  ["$lt on strings", { v: { $lt: "a" } }, ["B"]],
  ["$gt false finds true only", { v: { $gt: false } }, ["C"]],
  ["$gte null is $eq null", { v: { $gte: null } }, ["E", "F"]],
  ["$lte null is $eq null", { v: { $lte: null } }, ["E", "F"]],
  ["$gt null matches nothing", { v: { $gt: null } }, []],
  ["$lt null matches nothing", { v: { $lt: null } }, []],
  ["$in with mixed types", { v: { $in: [5, "abc", true, null] } }, ["A", "C", "E", "F", "J"]],
  ["$in keeps types apart", { v: { $in: [1, "5"] } }, ["B", "D"]],
  ["$in with 0 does not find false", { v: { $in: [0] } }, ["H"]],
  ["$in empty matches nothing", { v: { $in: [] } }, []],
  ["equality with an object", { v: { a: 5 } }, ["K"]],
  ["nested path", { "v.a": 5 }, ["K"]],
  ["nested path is case sensitive", { "addr.city": "Oslo" }, ["A"]],
  ["nested null matches null, missing and non-object parents", { "addr.city": null }, except("A", "B")],
  ["$ne on a nested path matches missing", { "addr.city": { $ne: "Oslo" } }, except("A")],
  ["several keys AND", { v: 5, "addr.city": "Oslo" }, ["A"]],
  ["several keys AND with no match", { v: 5, "addr.city": "oslo" }, []],
];

async function seedDocs(api: DataClient) {
  const ids = await api.seed("items", Object.values(DOCS));
  const byName = Object.fromEntries(ALL.map((n, i) => [n, ids[i]!]));
  const nameOf = Object.fromEntries(ALL.map((n, i) => [ids[i]!, n]));
  return { byName, nameOf };
}

const SETTINGS: Record<string, { indexed: string[] }>[] = [{}, { items: { indexed: ["v", "addr.city", "v.a"] } }];
for (const settings of SETTINGS) {
  describe(`filter semantics (MongoDB), ${Object.keys(settings).length ? "indexed fields" : "unindexed fields"}`, () => {
    it.each(SEMANTICS)("%s", async (_name, filter, expected) => {
      const { api } = await dataBackend(settings);
      const { nameOf } = await seedDocs(api);
      const res = await api.list("items", { filter, sort: { $createdAt: 1 } });
      expect(res.status).toBe(200);
      expect(res.body.records.map((r: { id: string }) => nameOf[r.id])).toEqual(expected);
      expect(res.body.total).toBe(expected.length);
    });

    it("sorts across types in MongoDB's order: null/missing, numbers, strings, objects, booleans", async () => {
      const { api } = await dataBackend(settings);
      const { nameOf } = await seedDocs(api);
      const names = async (sort: unknown) => (await api.list("items", { sort })).body.records.map((r: { id: string }) => nameOf[r.id]);
      const ascending = ["E", "F", "H", "D", "A", "I", "B", "J", "K", "G", "C"];
      expect(await names({ v: 1 })).toEqual(ascending);
      expect(await names({ v: -1 })).toEqual([...ascending].reverse());
    });
  });
}

describe("record metadata in filters and sorts", () => {
  it("reaches id, createdAt and updatedAt through $id, $createdAt and $updatedAt", async () => {
    const { t, api } = await dataBackend();
    const { byName, nameOf } = await seedDocs(api);
    const names = async (filter: unknown, sort: unknown = { $createdAt: 1 }) =>
      (await api.list("items", { filter, sort })).body.records.map((r: { id: string }) => nameOf[r.id]);
    expect(await names({ $id: byName.C })).toEqual(["C"]);
    expect(await names({ $id: { $in: [byName.A, byName.K, "rec_unknown"] } })).toEqual(["A", "K"]);
    const createdB = (await api.get("items", byName.B!)).body.record.createdAt;
    expect(await names({ $createdAt: { $lte: createdB } })).toEqual(["A", "B"]);
    t.clock.advance(60_000);
    const touched = await api.update("items", byName.F!, { touched: true });
    expect(await names({ $updatedAt: { $gte: touched.body.record.updatedAt } })).toEqual(["F"]);
    expect(await names({}, { $updatedAt: -1 })).toEqual(["F", ...except("F").reverse()]);
    // A data field may be called "id" or "createdAt": it is an ordinary field.
    await api.create("items", { id: "mine", createdAt: "whenever" });
    expect((await api.list("items", { filter: { id: "mine", createdAt: "whenever" } })).body.total).toBe(1);
  });

  it("refuses metadata values of the wrong type", async () => {
    const { api } = await dataBackend();
    for (const filter of [{ $id: 5 }, { $id: null }, { $createdAt: "yesterday" }, { $updatedAt: { $gt: 1700000000000 } }, { $id: { $in: ["a", 1] } }]) {
      expectError(await api.list("items", { filter }), 400, "invalid_filter");
    }
  });
});

describe("sorting and paging", () => {
  it("defaults to newest first, ties broken by creation order", async () => {
    const { t, api } = await dataBackend();
    const a = (await api.create("items", { n: 1 })).body.record.id;
    const b = (await api.create("items", { n: 2 })).body.record.id; // same millisecond as a
    t.clock.advance(10);
    const c = (await api.create("items", { n: 3 })).body.record.id;
    expect((await api.list("items")).body.records.map((r: { id: string }) => r.id)).toEqual([c, b, a]);
  });

  it("is stable and its pages tile the full result, for every sort", async () => {
    const { t, api } = await dataBackend({ items: { indexed: ["group"] } });
    const rows = Array.from({ length: 23 }, (_, i) => ({ group: ["b", "a", "c"][i % 3], n: i % 4, ...(i % 5 === 0 ? {} : { opt: i % 2 }) }));
    for (const data of rows) {
      await api.create("items", data);
      if (rows.indexOf(data) % 2) t.clock.advance(1); // pairs share a createdAt
    }
    const sorts = [undefined, { group: 1 }, { group: -1 }, { group: 1, n: -1 }, { opt: 1 }, { opt: -1, group: 1 }, { $createdAt: 1 }];
    for (const sort of sorts) {
      const full = (await api.list("items", { sort, limit: 1000 })).body.records.map((r: { id: string }) => r.id);
      expect(new Set(full).size).toBe(23);
      for (const size of [1, 4, 7]) {
        const paged: string[] = [];
        for (let offset = 0; offset < 23; offset += size) {
          const page = await api.list("items", { sort, limit: size, offset });
          expect(page.body).toMatchObject({ total: 23, limit: size, offset });
          paged.push(...page.body.records.map((r: { id: string }) => r.id));
        }
        expect(paged).toEqual(full);
      }
    }
  });

  it("orders by several keys in priority order", async () => {
    const { api } = await dataBackend();
    const ids = await api.seed("items", [
      { g: 2, n: 1 },
      { g: 1, n: 1 },
      { g: 2, n: 3 },
      { g: 1, n: 2 },
    ]);
    const order = (await api.list("items", { sort: { g: 1, n: -1 } })).body.records.map((r: { id: string }) => ids.indexOf(r.id));
    expect(order).toEqual([3, 1, 2, 0]);
  });
});

describe("refused filters and sorts", () => {
  const filters: [string, unknown, RegExp][] = [
    ["bad JSON", "{v:", /JSON/],
    ["an array", "[1]", /object/],
    ["a string", '"v"', /object/],
    ["null", "null", /object/],
    ["$where at the top", { $where: "this.v == 5" }, /\$where/],
    ["$or at the top", { $or: [{ v: 1 }] }, /\$or/],
    ["$regex", { v: { $regex: "^a" } }, /\$regex/],
    ["$where as an operator", { v: { $where: "1" } }, /\$where/],
    ["$nin (not supported)", { v: { $nin: [1] } }, /\$nin/],
    ["operators mixed with keys", { v: { $gt: 1, a: 2 } }, /mixes/],
    ["$in with a non-array", { v: { $in: 5 } }, /\$in/],
    ["$in with 101 values", { v: { $in: Array.from({ length: 101 }, (_, i) => i) } }, /101/],
    ["$gt with an object", { v: { $gt: { a: 1 } } }, /\$gt/],
    ["21 conditions", Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`f${i}`, i])), /20/],
    ["nested 7 deep", { v: { $eq: [[[[[1]]]]] } }, /nested/],
    ["over 4096 characters", { v: "x".repeat(4100) }, /4096/],
    ["a quote in a key", { "a'": 1 }, /field path/],
    ["a closing paren in a key", { "a')": 1 }, /field path/],
    ["SQL in a key", { "a') OR 1=1 --": 1 }, /field path/],
    ["a double quote in a key", { 'a"b': 1 }, /field path/],
    ["a bracket in a key", { "a[0]": 1 }, /field path/],
    ["a JSON path as key", { "$.a": 1 }, /not supported/],
    ["empty segment", { "a..b": 1 }, /field path/],
    ["leading dot", { ".a": 1 }, /field path/],
    ["empty key", { "": 1 }, /field path/],
    ["9 segments", { "a.b.c.d.e.f.g.h.i": 1 }, /field path/],
    ["a segment starting with a digit", { "items.0": 1 }, /field path/],
  ];
  it.each(filters)("filter: %s → 400 invalid_filter", async (_name, filter, message) => {
    const { api } = await dataBackend();
    await api.seed("items", [{ v: 5 }]);
    const res = await api.list("items", { filter });
    expectError(res, 400, "invalid_filter");
    expect(res.body.message).toMatch(message);
  });

  const sorts: [string, unknown][] = [
    ["bad JSON", "{"],
    ["an array", "[]"],
    ["empty", "{}"],
    ["direction 2", { v: 2 }],
    ["direction as a string", { v: "asc" }],
    ["a quote in the key", { "v'": 1 }],
    ["an operator key", { $where: 1 }],
    ["five keys", { a: 1, b: 1, c: 1, d: 1, e: 1 }],
  ];
  it.each(sorts)("sort: %s → 400 invalid_sort", async (_name, sort) => {
    const { api } = await dataBackend();
    expectError(await api.list("items", { sort }), 400, "invalid_sort");
  });

  // Query texts are remembered once parsed (data/records.ts listRequestOf): a refused text
  // must stay refused, and a remembered one must answer each tenant and collection alone.
  it("refuses a query text every time it is sent, and answers a repeated one from the caller's own records", async () => {
    const { t, api } = await dataBackend({ items: { indexed: ["v"] } });
    for (let i = 0; i < 3; i++) expectError(await api.list("items", { filter: "{v:", limit: 2 }), 400, "invalid_filter");
    for (let i = 0; i < 3; i++) expectError(await api.list("items", { filter: { v: 1 }, limit: 0 }), 400, "invalid_request");

    const mine = await api.seed("items", [{ v: 1 }, { v: 1 }, { v: 1 }, { v: 2 }]);
    const other = dataClient(t, await signupTenant(t));
    const theirs = await other.seed("items", [{ v: 1 }]);
    await other.seed("notes", [{ v: 1 }, { v: 1 }]);
    const ids = (res: { body: { records: { id: string }[] } }) => res.body.records.map((r) => r.id);
    for (let i = 0; i < 2; i++) {
      const page = await api.list("items", { filter: { v: 1 }, limit: 2 });
      expect(ids(page)).toEqual([mine[2], mine[1]]);
      expect(page.body.total).toBe(3);
      const theirPage = await other.list("items", { filter: { v: 1 }, limit: 2 });
      expect(ids(theirPage)).toEqual(theirs);
      expect(theirPage.body.total).toBe(1);
      expect((await other.list("notes", { filter: { v: 1 }, limit: 2 })).body.total).toBe(2);
      expect((await api.list("notes", { filter: { v: 1 }, limit: 2 })).body).toEqual({ records: [], total: 0, limit: 2, offset: 0 });
      expect(ids(await api.list("items", { filter: { v: 1 }, limit: 2, offset: 2 }))).toEqual([mine[0]]);
      expect(ids(await api.list("items", { filter: { v: 2 }, limit: 2 }))).toEqual([mine[3]]);
      expectError(await api.list("items", { filter: "{v:", limit: 2 }), 400, "invalid_filter");
    }
  });

  it("treats SQL-looking values as plain values", async () => {
    const { api } = await dataBackend({ items: { indexed: ["name"] } });
    const ids = await api.seed("items", [{ name: "' OR 1=1 --" }, { name: "x') OR ('1'='1" }, { name: "plain" }, { __proto__x: 1 }]);
    const count = async (filter: unknown) => (await api.list("items", { filter })).body.records.map((r: { id: string }) => r.id);
    expect(await count({ name: "' OR 1=1 --" })).toEqual([ids[0]]);
    expect(await count({ name: "x') OR ('1'='1" })).toEqual([ids[1]]);
    expect(await count({ name: { $in: ["' OR '1'='1", '"; DROP TABLE records; --'] } })).toEqual([]);
    expect(await count({ other: "') OR 1=1 --" })).toEqual([]);
    expect(await count('{"__proto__":1}')).toEqual([]);
    expect(await count('{"__proto__x":1}')).toEqual([ids[3]]);
    expect(await count({ "constructor.prototype": 1 })).toEqual([]);
    expect((await api.list("items")).body.total).toBe(4);
  });
});
