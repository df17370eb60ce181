import { describe, expect, it } from "vitest";
import type { Reply } from "./_helpers.ts";
import { dataBackend } from "./data-helpers.ts";

const NUL = "\u0000";
const HIGH = "\ud800";
const LOW = "\udc00";

describe("record text every engine can store (issue 39 item 7)", () => {
  it("refuses NUL and unpaired surrogates in keys and values at any depth, on create, update and upsert: 400, nothing stored", async () => {
    const { api } = await dataBackend({ people: { unique: ["email"] } });
    const bad: [string, unknown][] = [
      ["NUL in a value", { name: `a${NUL}b` }],
      ["NUL in a key", { [`na${NUL}me`]: 1 }],
      ["a lone high surrogate", { name: `x${HIGH}` }],
      ["a lone low surrogate", { name: `${LOW}x` }],
      ["surrogates the wrong way round", { name: `${LOW}${HIGH}` }],
      ["a lone surrogate in a key", { [`k${HIGH}`]: "v" }],
      ["deep in objects", { a: { b: { c: { d: `deep${NUL}` } } } }],
      ["in an array", { tags: ["ok", ["nested", `x${LOW}`]] }],
      ["a key in an array's object", { list: [{ [`${NUL}`]: true }] }],
    ];
    const refused = (res: Reply, what: string) =>
      expect({ status: res.status, ...res.body }, what).toEqual({ status: 400, error: "invalid_request", message: expect.stringMatching(/NUL character|unpaired UTF-16 surrogate/) });
    const kept = await api.create("notes", { name: "kept" });
    expect(kept.status).toBe(201);
    for (const [what, data] of bad) {
      refused(await api.create("notes", data), `create: ${what}`);
      refused(await api.upsert("people", { email: "a@example.com", ...(data as object) }), `upsert: ${what}`);
      refused(await api.update("notes", kept.body.record.id, data), `update: ${what}`);
    }
    expect((await api.list("notes")).body.records.map((r: { data: unknown }) => r.data)).toEqual([{ name: "kept" }]);
    expect((await api.list("people")).body.total).toBe(0);

    // Well-formed text, surrogate pairs included, is stored and read back as sent.
    const fine = { name: "café 😀 𝄞", [`emoji😀`]: "\ud83d\ude00", empty: "" };
    const created = await api.create("notes", fine);
    expect(created.status, created.text).toBe(201);
    expect((await api.get("notes", created.body.record.id)).body.record.data).toEqual(fine);
  });

  it("a field named NULL (any case) is filtered and sorted like any other field, declared indexed or not", async () => {
    const { api } = await dataBackend({ indexed: { indexed: ["NULL", "a.null"] } });
    for (const collection of ["plain", "indexed"]) {
      const ids = await api.seed(collection, [{ NULL: 2, a: { null: "b" } }, { NULL: 3, a: { null: "a" } }, { NULL: 1 }, { other: true }]);
      const listed = async (params: { filter?: unknown; sort?: unknown }) => {
        const res = await api.list(collection, params);
        expect(res.status, res.text).toBe(200);
        return res.body.records.map((r: { id: string }) => ids.indexOf(r.id));
      };
      expect(await listed({ filter: { NULL: 3 } }), collection).toEqual([1]);
      expect(await listed({ filter: { NULL: { $gte: 2 } }, sort: { NULL: 1 } }), collection).toEqual([0, 1]);
      expect(await listed({ sort: { NULL: -1 } }), collection).toEqual([1, 0, 2, 3]);
      expect(await listed({ filter: { "a.null": { $ne: null } }, sort: { "a.null": 1 } }), collection).toEqual([1, 0]);
      expect(await listed({ filter: { NULL: null } }), collection).toEqual([3]);
    }
  });
});
