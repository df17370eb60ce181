import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { dataBackend, dataClient, type DataClient } from "./data-helpers.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";

const titles = async (api: DataClient, collection: string, filter: unknown, extra: Record<string, unknown> = {}) => {
  const res = await api.list(collection, { filter, sort: { title: 1 }, ...extra });
  expect(res.status, res.text).toBe(200);
  return res.body.records.map((r: { data: { title: string } }) => r.data.title);
};

describe("full-text search ($text)", () => {
  it("finds every word, ignoring case and accents, by prefix with *, and only in the named fields", async () => {
    const { api } = await dataBackend({ notes: { search: { language: "en" } } });
    await api.seed("notes", [
      { title: "Café in Zürich", body: { text: "the best coffee" } },
      { title: "Coffee beans", body: { text: "from a café" }, tags: ["roast"] },
      { title: "Tea", body: { text: "no coffee here" }, tags: ["green", "Roasted"] },
    ]);
    expect(await titles(api, "notes", { $text: { $search: "CAFE" } })).toEqual(["Café in Zürich", "Coffee beans"]);
    expect(await titles(api, "notes", { $text: { $search: "zurich cafe" } })).toEqual(["Café in Zürich"]);
    expect(await titles(api, "notes", { $text: { $search: "coff*" } })).toEqual(["Café in Zürich", "Coffee beans", "Tea"]);
    expect(await titles(api, "notes", { $text: { $search: "coffee", fields: ["title"] } })).toEqual(["Coffee beans"]);
    expect(await titles(api, "notes", { $text: { $search: "roast*", fields: ["tags"] } })).toEqual(["Coffee beans", "Tea"]);
    // "the" is an English stop word: left out of the search as of the documents.
    expect(await titles(api, "notes", { $text: { $search: "the best" } })).toEqual(["Café in Zürich"]);
    // No stemming: "beans" is not "bean"; a prefix is.
    expect(await titles(api, "notes", { $text: { $search: "bean" } })).toEqual([]);
  });

  it("combines with filters, sorts, totals, cursor paging and tenant privacy", async () => {
    const { t, api } = await dataBackend({ notes: { search: { language: "simple" } } });
    await api.seed("notes", Array.from({ length: 9 }, (_, i) => ({ title: `red ${i}`, n: i % 3 })));
    await api.seed("notes", [{ title: "blue", n: 0 }]);
    const res = await api.list("notes", { filter: { $text: { $search: "red" }, n: 0 }, sort: { title: -1 }, limit: 2 });
    expect([res.body.total, res.body.records.map((r: { data: { title: string } }) => r.data.title)]).toEqual([3, ["red 6", "red 3"]]);
    const next = await api.list("notes", { filter: { $text: { $search: "red" }, n: 0 }, sort: { title: -1 }, limit: 2, after: res.body.next });
    expect(next.body.records.map((r: { data: { title: string } }) => r.data.title)).toEqual(["red 0"]);
    const stranger = dataClient(t, await signupTenant(t));
    expect((await stranger.list("notes", { filter: { $text: { $search: "red" } } })).body.total).toBe(0);
  });

  it("follows writes: updated words are found and old ones not; deleted records are gone", async () => {
    const { api } = await dataBackend({ notes: { unique: ["key"], search: { language: "simple" } } });
    const [id] = await api.seed("notes", [{ title: "apple", key: "k" }]);
    expect((await api.update("notes", id!, { title: "banana" })).status).toBe(200);
    expect(await titles(api, "notes", { $text: { $search: "apple" } })).toEqual([]);
    expect(await titles(api, "notes", { $text: { $search: "banana" } })).toEqual(["banana"]);
    expect((await api.upsert("notes", { key: "k", title: "cherry" })).status).toBe(200);
    expect(await titles(api, "notes", { $text: { $search: "cherry" } })).toEqual(["cherry"]);
    await api.remove("notes", id!);
    expect(await titles(api, "notes", { $text: { $search: "cherry" } })).toEqual([]);
  });

  it("follows an update in a collection without unique fields (where the stores have one-statement updates)", async () => {
    const { api } = await dataBackend({ notes: { search: { language: "simple" } } });
    const [id] = await api.seed("notes", [{ title: "apple" }]);
    expect((await api.update("notes", id!, { title: "banana" })).status).toBe(200);
    expect(await titles(api, "notes", { $text: { $search: "apple" } })).toEqual([]);
    expect(await titles(api, "notes", { $text: { $search: "banana" } })).toEqual(["banana"]);
  });

  it("answers the same through a complete field index: $text with a filter or sort on the indexed field, paged by cursor", async () => {
    const { t, tenant, api } = await dataBackend({ notes: { indexed: ["n"], search: { language: "simple" } } });
    await api.seed("notes", Array.from({ length: 12 }, (_, i) => ({ title: `${i % 4 === 3 ? "blue" : "red"} ${String(i).padStart(2, "0")}`, n: i % 3 })));
    await t.backend.core.db.records.autoIndexesSettled();
    const core = t.backend.core;
    if (core.engine === "sqlite") {
      // The filter's indexed field drives the list (its entries joined to the records).
      const scope = { appId: t.app.id, tenantId: tenant.id, collection: "notes", indexed: new Set(["n"]), search: "simple" as const };
      const plan = await core.db.records.explainList(scope, parseFilter('{"$text":{"$search":"red"},"n":{"$gte":1}}'), parseSort('{"n":1}'));
      expect(plan.join(" ")).toContain("record_field_entries");
    }
    const pages = async (filter: unknown, sort: unknown) => {
      const seen: string[] = [];
      let res = await api.list("notes", { filter, sort, limit: 2 });
      for (;;) {
        expect(res.status, res.text).toBe(200);
        seen.push(...res.body.records.map((r: { data: { title: string } }) => r.data.title));
        if (!res.body.next) return { total: res.body.total as number, seen };
        res = await api.list("notes", { filter, sort, limit: 2, after: res.body.next });
      }
    };
    expect(await pages({ $text: { $search: "red" }, n: { $gte: 1 } }, { n: 1, title: -1 })).toEqual({ total: 6, seen: ["red 10", "red 04", "red 01", "red 08", "red 05", "red 02"] });
    expect(await pages({ $text: { $search: "red" }, n: 0 }, { created_at: 1 })).toEqual({ total: 3, seen: ["red 00", "red 06", "red 09"] });
    expect(await pages({ $text: { $search: "blue" } }, { n: -1 })).toEqual({ total: 3, seen: ["blue 11", "blue 07", "blue 03"] });
  });

  it("indexes records written before search was turned on, and forgets them when it is turned off", async () => {
    const { t, api } = await dataBackend();
    const [older] = await api.seed("notes", [{ title: "older words" }]);
    expectError(await api.list("notes", { filter: { $text: { $search: "older" } } }), 400, "invalid_filter");
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { notes: { search: { language: "nl" } } } } });
    await expect.poll(async () => titles(api, "notes", { $text: { $search: "older" } })).toEqual(["older words"]);
    // Dutch stop words now: "de" is left out, so a search of only "de" has no word.
    await api.seed("notes", [{ title: "de kat" }]);
    expect(await titles(api, "notes", { $text: { $search: "de kat" } })).toEqual(["de kat"]);
    const onlyStop = await api.list("notes", { filter: { $text: { $search: "de het" } } });
    expectError(onlyStop, 400, "invalid_filter");
    expect(onlyStop.body.message).toMatch(/no word to look for/);

    // Off: its words are dropped, so a record changed meanwhile is indexed afresh when it is on again.
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { notes: { search: null } } } } as never);
    await expect.poll(async () => (await api.list("notes", { filter: { $text: { $search: "older" } } })).status).toBe(400);
    await api.update("notes", older!, { title: "newer words" });
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { notes: { search: { language: "nl" } } } } });
    await expect.poll(async () => titles(api, "notes", { $text: { $search: "newer" } })).toEqual(["newer words"]);
    expect(await titles(api, "notes", { $text: { $search: "older" } })).toEqual([]);
  });

  it("refuses a malformed $text with a clear message", async () => {
    const { api } = await dataBackend({ notes: { search: { language: "es" } } });
    for (const [filter, message] of [
      [{ $text: "red" }, /\$text takes an object/],
      [{ $text: { $search: "" } }, /needs \$search/],
      [{ $text: { $search: 5 } }, /needs \$search/],
      [{ $text: { $search: "red", fields: ["a b"] } }, /fields must be a list/],
      [{ $text: { $search: "red", lang: "en" } }, /only \$search and fields/],
      [{ $text: { $search: "x".repeat(513) } }, /maximum is 512/],
      [{ $text: { $search: "!!! ..." } }, /no word to look for/],
    ] as const) {
      const res = await api.list("notes", { filter });
      expectError(res, 400, "invalid_filter");
      expect(res.body.message).toMatch(message);
    }
  });
});
