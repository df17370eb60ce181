import { describe, expect, it } from "vitest";
import { expectError } from "./_helpers.ts";
import { dataBackend, type DataClient } from "./data-helpers.ts";
import { parseFilter, parseSort } from "../src/data/query.ts";

type Page = { records: { id: string; data: { title: string } }[]; total: number; offset: number; next?: string };

const titlesOf = (page: Page) => page.records.map((r) => r.data.title);

/** Every page of a list, following `next`; the pages' records in order and each page's offset. */
async function walk(api: DataClient, collection: string, filter: unknown, sort: unknown, limit: number) {
  const seen: string[] = [];
  const offsets: number[] = [];
  let res = await api.list(collection, { filter, sort, limit });
  for (;;) {
    expect(res.status, res.text).toBe(200);
    const page = res.body as Page;
    seen.push(...titlesOf(page));
    offsets.push(page.offset);
    if (!page.next) return { seen, offsets, total: page.total };
    res = await api.list(collection, { filter, sort, limit, after: page.next });
  }
}

// Four matches of "red", each better than the next on both engines: more occurrences in a
// record of the same length, then the same occurrences in a longer record.
const RANKED = ["red red red blue", "red red blue green", "red blue green yellow", "red blue green yellow black white"];

describe("ranked full-text search (sort by $rank)", () => {
  it("puts the better match first: more of the words sought, in a shorter record", async () => {
    const { api } = await dataBackend({ notes: { search: { language: "en" } } });
    // Written worst first, so neither creation order nor its reverse is the ranked order.
    await api.seed("notes", [RANKED[2], RANKED[0], RANKED[3], "blue green", RANKED[1]].map((title) => ({ title })));
    const res = await api.list("notes", { filter: { $text: { $search: "red" } }, sort: { $rank: -1 } });
    expect(res.status, res.text).toBe(200);
    expect([res.body.total, titlesOf(res.body)]).toEqual([4, RANKED]);
    // 1: worst first.
    const worst = await api.list("notes", { filter: { $text: { $search: "red" } }, sort: { $rank: 1 } });
    expect(titlesOf(worst.body)).toEqual([...RANKED].reverse());
    // A prefix counts every word it starts; stop words are not words ("the" in English).
    await api.seed("notes", [{ title: "the reddish redwood" }, { title: "the the the rosy redwood" }]);
    const prefix = titlesOf((await api.list("notes", { filter: { $text: { $search: "red*" } }, sort: { $rank: -1 } })).body);
    const at = (title: string) => prefix.indexOf(title);
    // "reddish redwood": two words sought in two, above "red red blue green" (two in four) and
    // "rosy redwood" (one in two), which is above "red blue green yellow" (one in four).
    expect(prefix).toHaveLength(6);
    expect(at("the reddish redwood")).toBeLessThan(at(RANKED[1]!));
    expect(at("the reddish redwood")).toBeLessThan(at("the the the rosy redwood"));
    expect(at("the the the rosy redwood")).toBeLessThan(at(RANKED[2]!));
  });

  it("breaks ties by the sort's next keys, else newest first, and ranks within the other conditions", async () => {
    const { api } = await dataBackend({ notes: { indexed: ["n"], search: { language: "simple" } } });
    // Three words each: the more "red", the better; the two "red blue green" tie.
    const [first, second] = await api.seed("notes", [
      { title: "red blue green", n: 1, key: "b" },
      { title: "red blue green", n: 1, key: "a" },
      { title: "red red blue", n: 2, key: "c" },
      { title: "red red red", n: 1, key: "d" },
    ]);
    const ids = async (sort: unknown) => ((await api.list("notes", { filter: { $text: { $search: "red" } }, sort })).body as Page).records.map((r) => r.id);
    const ranked = await ids({ $rank: -1 });
    // The tie: newest first, as every sort's final tie-break.
    expect(ranked.slice(-2)).toEqual([second, first]);
    expect((await ids({ $rank: -1, key: 1 })).slice(-2)).toEqual([second, first]);
    expect((await ids({ $rank: -1, key: -1 })).slice(-2)).toEqual([first, second]);
    // A filter on an indexed field narrows the ranked matches.
    const narrowed = await api.list("notes", { filter: { $text: { $search: "red" }, n: 1 }, sort: { $rank: -1 } });
    expect([narrowed.body.total, titlesOf(narrowed.body)]).toEqual([3, ["red red red", "red blue green", "red blue green"]]);
    // With fields: only records with the word in them match; the rank counts all their words.
    const inKey = await api.list("notes", { filter: { $text: { $search: "red", fields: ["title"] }, n: { $gte: 1 } }, sort: { $rank: 1 } });
    expect(titlesOf(inKey.body)).toEqual(["red blue green", "red blue green", "red red blue", "red red red"]);
    // $rank after another key: the other key first.
    const byN = await api.list("notes", { filter: { $text: { $search: "red" } }, sort: { n: -1, $rank: -1 } });
    expect(titlesOf(byN.body)).toEqual(["red red blue", "red red red", "red blue green", "red blue green"]);
  });

  it("pages by offset and by cursor (a position) with the same records as one page, total exact", async () => {
    const { api } = await dataBackend({ notes: { search: { language: "simple" } } });
    const titles = Array.from({ length: 23 }, (_, i) => `${"red ".repeat(1 + (i % 4))}${"x".repeat(1 + (i % 3))} n${i}`);
    await api.seed("notes", titles.map((title) => ({ title })));
    await api.seed("notes", [{ title: "blue" }]);
    const filter = { $text: { $search: "red" } };
    const sort = { $rank: -1 };
    const whole = await api.list("notes", { filter, sort, limit: 100 });
    const all = titlesOf(whole.body);
    expect([whole.body.total, all.length]).toEqual([23, 23]);
    expect(all[0]).toMatch(/^red red red red /);
    const cursor = await walk(api, "notes", filter, sort, 5);
    expect(cursor).toEqual({ seen: all, offsets: [0, 5, 10, 15, 20], total: 23 });
    const byOffset: string[] = [];
    for (let offset = 0; offset < 23; offset += 5) byOffset.push(...titlesOf((await api.list("notes", { filter, sort, limit: 5, offset })).body));
    expect(byOffset).toEqual(all);
    // A ranked list's cursor continues that list only.
    const first = await api.list("notes", { filter, sort, limit: 5 });
    const other = await api.list("notes", { filter, sort: { $createdAt: -1 }, limit: 5, after: first.body.next });
    expectError(other, 400, "invalid_cursor");
    const unranked = await api.list("notes", { filter, limit: 5 });
    expectError(await api.list("notes", { filter, sort, limit: 5, after: unranked.body.next }), 400, "invalid_cursor");
  });

  it("refuses $rank without a $text, as a filter, or with a bad direction", async () => {
    const { api } = await dataBackend({ notes: { search: { language: "simple" } } });
    await api.seed("notes", [{ title: "red" }]);
    const noText = await api.list("notes", { filter: { title: "red" }, sort: { $rank: -1 } });
    expectError(noText, 400, "invalid_sort");
    expect(noText.body.message).toMatch(/\$rank orders records by how well they match the filter's \$text search/);
    expectError(await api.list("notes", { sort: { $rank: -1 } }), 400, "invalid_sort");
    expectError(await api.list("notes", { filter: { $rank: { $gt: 1 } } }), 400, "invalid_filter");
    const dir = await api.list("notes", { filter: { $text: { $search: "red" } }, sort: { $rank: "best" } });
    expectError(dir, 400, "invalid_sort");
    expect(dir.body.message).toMatch(/"\$rank" must be 1 \(ascending\) or -1 \(descending\)/);
    const other = await api.list("notes", { filter: { $text: { $search: "red" } }, sort: { $score: -1 } });
    expectError(other, 400, "invalid_sort");
    expect(other.body.message).toMatch(/Sorts take data fields, .*and \$rank/);
  });

  it("reads the full-text index's matches first on SQLite (bm25 scores them once per page)", async () => {
    const { t, tenant, api } = await dataBackend({ notes: { indexed: ["n"], search: { language: "simple" } } });
    await api.seed("notes", [{ title: "red", n: 1 }]);
    const core = t.backend.core;
    if (core.engine !== "sqlite") return;
    await core.db.records.autoIndexesSettled();
    const scope = { appId: t.app.id, tenantId: tenant.id, collection: "notes", indexed: new Set(["n"]), search: "simple" as const };
    const plan = (await core.db.records.explainList(scope, parseFilter('{"$text":{"$search":"red"},"n":1}'), parseSort('{"$rank":-1}'))).join(" | ");
    expect(plan).toMatch(/^SCAN records_fts VIRTUAL TABLE/);
    expect(plan).toContain("SEARCH records USING INTEGER PRIMARY KEY");
  });
});
