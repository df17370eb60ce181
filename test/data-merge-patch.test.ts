import { describe, expect, it } from "vitest";
import { mergePatch } from "../src/tools/merge-patch.ts";
import { dataBackend } from "./data-helpers.ts";

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
