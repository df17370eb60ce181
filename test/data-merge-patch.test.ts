import { describe, expect, it } from "vitest";
import { mergePatch } from "../src/tools/merge-patch.ts";
import { dataBackend, dataClient } from "./data-helpers.ts";
import { signupTenant } from "./_helpers.ts";
import { seededRandom } from "./_random.ts";

// RFC 7396, Appendix A: [original, patch, result].
const APPENDIX_A: [unknown, unknown, unknown][] = [
  [{ a: "b" }, { a: "c" }, { a: "c" }],
  [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
  [{ a: "b" }, { a: null }, {}],
  [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
  [{ a: ["b"] }, { a: "c" }, { a: "c" }],
  [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
  [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
  [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
  [["a", "b"], ["c", "d"], ["c", "d"]],
  [{ a: "b" }, ["c"], ["c"]],
  [{ a: "foo" }, null, null],
  [{ a: "foo" }, "bar", "bar"],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: "b", c: null }, { a: "b" }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
];

describe("mergePatch (RFC 7396 Appendix A)", () => {
  it.each(APPENDIX_A)("%j patched with %j", (original, patch, result) => {
    const before = structuredClone(original);
    expect(mergePatch(original, patch)).toEqual(result);
    expect(original).toEqual(before);
  });

  it("keeps __proto__ an ordinary key", () => {
    const patched = mergePatch(JSON.parse('{"a":1}'), JSON.parse('{"__proto__":{"x":1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(patched)).toBe(Object.prototype);
    expect(JSON.stringify(patched)).toBe('{"a":1,"__proto__":{"x":1}}');
  });
});

// The cases whose original and patch are objects apply to PUT, whose data is always an object.
const OBJECT_CASES = APPENDIX_A.filter(([o, p]) => o !== null && typeof o === "object" && !Array.isArray(o) && p !== null && typeof p === "object" && !Array.isArray(p));

describe("PUT applies the merge patch to data", () => {
  it.each(OBJECT_CASES)("%j patched with %j", async (original, patch, result) => {
    const { api } = await dataBackend();
    const { body } = await api.create("docs", original);
    const res = await api.update("docs", body.record.id, patch);
    expect(res.status).toBe(200);
    expect(res.body.record.data).toEqual(result);
    expect((await api.get("docs", body.record.id)).body.record.data).toEqual(result);
  });

  it("has an object case for every Appendix A row whose original and patch are objects", () => {
    expect(OBJECT_CASES).toHaveLength(10);
  });
});


type Collections = Record<string, { unique?: string[] }>;
// A plain collection (merged by the store where it can) and one with a unique field (merged in JS).
const KINDS: { collection: string; collections: Collections; title: string }[] = [
  { collection: "docs", collections: {}, title: "a plain collection" },
  { collection: "uniq", collections: { uniq: { unique: ["zz"] } }, title: "a collection with a unique field" },
];

const KEYS = ["a", "b", "c", "__proto__", "1", "10", "é", "a b", "quo\"te", "emoji😀"];
const SCALARS = [0, -1, 1.5, 1e21, 5e-324, -0.000001, 123456789012, true, false, "", "x", "é😀", 'say "hi"\n\t\\', "\u2028", "null"];

function randomValue(next: () => number, depth: number, nulls: boolean): unknown {
  const r = next();
  if (nulls && r < 0.2) return null;
  if (depth < 4 && r < 0.5) return randomObject(next, depth + 1, nulls);
  if (depth < 4 && r < 0.6) return Array.from({ length: Math.floor(next() * 3) }, () => randomValue(next, depth + 1, false));
  return SCALARS[Math.floor(next() * SCALARS.length)];
}

function randomObject(next: () => number, depth: number, nulls: boolean): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = Math.floor(next() * 4); i > 0; i--) {
    Object.defineProperty(o, KEYS[Math.floor(next() * KEYS.length)]!, { value: randomValue(next, depth, nulls), enumerable: true, writable: true, configurable: true });
  }
  return o;
}

// PUT merges in the store where it can (SQLite's json_patch) and in JS where a unique field
// needs checking: both must give RFC 7396's result, the reference implementation's.
describe("PUT agrees with the reference merge patch on random data", () => {
  for (const { collection, collections, title } of KINDS) {
    it(`in ${title}`, async () => {
      const { api } = await dataBackend(collections);
      for (let seed = 1; seed <= 40; seed++) {
        const next = seededRandom(seed);
        const original = randomObject(next, 0, false);
        const patch = randomObject(next, 0, true);
        const expected = mergePatch(original, patch);
        const created = await api.create(collection, original);
        expect(created.status, `seed ${seed}`).toBe(201);
        const id = created.body.record.id as string;
        const res = await api.update(collection, id, patch);
        expect(res.status, `seed ${seed}`).toBe(200);
        expect(res.body.record.data, `seed ${seed}`).toEqual(expected);
        expect((await api.get(collection, id)).body.record.data, `seed ${seed}`).toEqual(expected);
        const listed = (await api.list(collection, { limit: 1000 })).body.records.find((r: { id: string }) => r.id === id);
        expect(listed.data, `seed ${seed}`).toEqual(expected);
      }
    });
  }
});

describe("PUT's size limit counts the merged data's UTF-8 bytes", () => {
  const MAX = 256 * 1024;
  for (const { collection, collections, title } of KINDS) {
    it(`in ${title}: the limit passes, one byte more is 413`, async () => {
      const { api } = await dataBackend(collections);
      const original = { keep: "é".repeat(1000) };
      // "é" is 2 bytes: fill up to the limit with it, and an ASCII character for an odd remainder.
      const patchTo = (bytes: number) => {
        const base = Buffer.byteLength(JSON.stringify({ ...original, s: "" }));
        const room = bytes - base;
        return { s: "é".repeat(Math.floor(room / 2)) + "x".repeat(room % 2) };
      };
      const atLimit = patchTo(MAX);
      expect(Buffer.byteLength(JSON.stringify(mergePatch(original, atLimit)))).toBe(MAX);
      const a = (await api.create(collection, original)).body.record.id as string;
      const ok = await api.update(collection, a, atLimit);
      expect(ok.status).toBe(200);
      expect(ok.body.record.data).toEqual(mergePatch(original, atLimit));

      const b = (await api.create(collection, original)).body.record.id as string;
      const over = await api.update(collection, b, patchTo(MAX + 1));
      expect(over.status).toBe(413);
      expect(over.body).toEqual({ error: "payload_too_large", message: `data is ${MAX + 1} bytes as JSON; a record holds at most ${MAX} bytes (256 KiB).` });
      // Nothing was written.
      expect((await api.get(collection, b)).body.record.data).toEqual(original);
    });
  }

  it("a missing record is 404, in scope only", async () => {
    const { api, t } = await dataBackend();
    const other = (await api.create("docs", { a: 1 })).body.record.id as string;
    expect((await api.update("docs", "rec_missing", { a: 2 })).status).toBe(404);
    expect((await api.update("other", other, { a: 2 })).status).toBe(404);
    const stranger = dataClient(t, await signupTenant(t));
    expect((await stranger.update("docs", other, { a: 3 })).status).toBe(404);
    expect((await api.get("docs", other)).body.record.data).toEqual({ a: 1 });
  });
});
