import { describe, expect, it } from "vitest";
import { expectError, signupTenant } from "./_helpers.ts";
import { dataBackend, dataClient, type DataClient, type ListParams } from "./data-helpers.ts";
import { seededRandom } from "./_random.ts";

/** Every page of a list by cursor, from the first: the ids in order, and each page's body. */
async function walk(api: DataClient, collection: string, params: ListParams) {
  const ids: string[] = [];
  const pages: { total: number; offset: number; count: number }[] = [];
  let after: string | undefined;
  for (let guard = 0; guard < 500; guard++) {
    const res = await api.list(collection, { ...params, ...(after === undefined ? {} : { after }) });
    expect(res.status, res.text).toBe(200);
    ids.push(...res.body.records.map((r: { id: string }) => r.id));
    pages.push({ total: res.body.total, offset: res.body.offset, count: res.body.records.length });
    after = res.body.next;
    if (after === undefined) return { ids, pages };
  }
  throw new Error("the cursor never ended");
}

describe("cursor paging (after)", () => {
  it("walks a list page by page with next, reporting the exact total and each page's offset", async () => {
    const { api } = await dataBackend();
    const ids = await api.seed("notes", Array.from({ length: 7 }, (_, i) => ({ i })));
    const newestFirst = [...ids].reverse();
    const first = await api.list("notes", { limit: 3 });
    expect(first.body).toMatchObject({ total: 7, limit: 3, offset: 0 });
    expect(typeof first.body.next).toBe("string");
    const { ids: walked, pages } = await walk(api, "notes", { limit: 3 });
    expect(walked).toEqual(newestFirst);
    expect(pages).toEqual([
      { total: 7, offset: 0, count: 3 },
      { total: 7, offset: 3, count: 3 },
      { total: 7, offset: 6, count: 1 },
    ]);
  });

  it("keeps its place when records are created before it (an offset would repeat one)", async () => {
    const { t, api } = await dataBackend();
    const ids = await api.seed("notes", Array.from({ length: 4 }, (_, i) => ({ i })));
    const first = await api.list("notes", { limit: 2 });
    t.clock.advance(1000);
    await api.create("notes", { i: "newer" });
    const second = await api.list("notes", { limit: 2, after: first.body.next });
    expect(second.body.records.map((r: { id: string }) => r.id)).toEqual([ids[1], ids[0]]);
    expect(second.body.total).toBe(5);
  });

  it.each([
    ["no declared index", {}],
    ["v and w indexed", { things: { indexed: ["v", "w"] } }],
  ])("pages by cursor exactly as by offset, over random records, filters and sorts (%s)", async (_, collections) => {
    const { t, api } = await dataBackend(collections);
    const r = seededRandom(4401);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
    const VALUES = [0, 1, -1, 2.5, 10, "", "a", "B", "b", "é", "10", true, false, null, { a: 1 }, [1, 2], []];
    const rows = Array.from({ length: 60 }, () => {
      const d: Record<string, unknown> = {};
      if (r() < 0.8) d.v = pick(VALUES);
      if (r() < 0.6) d.w = pick([1, 2, 3, "x", null]);
      if (r() < 0.5) d.n = { x: pick(VALUES) };
      return d;
    });
    // Some records share a creation time: the tie-break on creation order must hold across pages.
    for (const data of rows) {
      const res = await api.create("things", data);
      expect(res.status).toBe(201);
      if (r() < 0.5) t.clock.advance(1000);
      if (r() < 0.2) await api.update("things", res.body.record.id, { touched: true });
    }
    const SORTS = [undefined, { v: 1 }, { v: -1 }, { w: 1, v: -1 }, { "n.x": 1 }, { $updatedAt: 1 }, { $id: -1 }, { $createdAt: 1 }, { w: -1, $id: 1 }, { v: 1, $createdAt: -1 }];
    const FILTERS = [undefined, { w: { $ne: null } }, { v: { $gte: 0 } }, { v: { $in: ["a", "b", 1, null] } }, { touched: true }];
    for (let round = 0; round < 25; round++) {
      const params: ListParams = { sort: pick(SORTS), filter: pick(FILTERS) };
      const full = await api.list("things", { ...params, limit: 1000 });
      expect(full.status, full.text).toBe(200);
      const limit = 1 + Math.floor(r() * 9);
      const { ids, pages } = await walk(api, "things", { ...params, limit });
      const label = JSON.stringify({ ...params, limit });
      expect(ids, label).toEqual(full.body.records.map((x: { id: string }) => x.id));
      for (const page of pages) expect(page.total, label).toBe(full.body.total);
      // Offset pages of the same limit are the same pages.
      for (let i = 0; i < pages.length; i++) {
        const byOffset = await api.list("things", { ...params, limit, offset: i * limit });
        expect(byOffset.body.records.map((x: { id: string }) => x.id), label).toEqual(ids.slice(i * limit, (i + 1) * limit));
      }
    }
  });

  it("refuses a cursor from another query, another tenant, an altered one, or one sent with offset", async () => {
    const { t, tenant, api } = await dataBackend();
    await api.seed("notes", [{ s: "a" }, { s: "b" }, { s: "c" }]);
    await api.seed("other", [{ s: "a" }, { s: "b" }]);
    const next = (await api.list("notes", { limit: 1, filter: { s: { $ne: "z" } } })).body.next as string;

    const otherFilter = await api.list("notes", { limit: 1, filter: { s: { $ne: "y" } }, after: next });
    expectError(otherFilter, 400, "invalid_cursor");
    expect(otherFilter.body.message).toMatch(/another list/);
    expectError(await api.list("notes", { limit: 1, filter: { s: { $ne: "z" } }, sort: { s: 1 }, after: next }), 400, "invalid_cursor");
    expectError(await api.list("other", { limit: 1, filter: { s: { $ne: "z" } }, after: next }), 400, "invalid_cursor");
    // The same filter spelled differently is the same query.
    expect((await api.list("notes", { limit: 1, filter: '{ "s" : {"$ne":"z"} }', after: next })).status).toBe(200);

    const intruder = dataClient(t, await signupTenant(t));
    const stolen = await intruder.list("notes", { limit: 1, filter: { s: { $ne: "z" } }, after: next });
    expectError(stolen, 400, "invalid_cursor");
    expect(stolen.body.message).toMatch(/not a cursor this server issued for you/);

    const [body, mac] = next.split(".") as [string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body, "base64url").toString()), a: 99 })).toString("base64url");
    expectError(await api.list("notes", { limit: 1, filter: { s: { $ne: "z" } }, after: `${forged}.${mac}` }), 400, "invalid_cursor");
    for (const junk of ["x", ".", "abc.def", "%%%", "a".repeat(9000)]) {
      expectError(await api.list("notes", { limit: 1, filter: { s: { $ne: "z" } }, after: junk }), 400, junk.length > 8192 ? "invalid_request" : "invalid_cursor");
    }
    expectError(await api.list("notes", { limit: 1, filter: { s: { $ne: "z" } }, after: next, offset: 1 }), 400, "invalid_request");
    expect(tenant.id).toBeTruthy();
  });

  it("gives the last page no next, and an empty list none either", async () => {
    const { api } = await dataBackend();
    expect((await api.list("empty")).body).toEqual({ records: [], total: 0, limit: 50, offset: 0 });
    await api.seed("notes", [{ i: 1 }, { i: 2 }]);
    const all = await api.list("notes", { limit: 2 });
    // A full page cannot know it is the last without a count: its next leads to an empty page.
    const after = await api.list("notes", { limit: 2, after: all.body.next });
    expect(after.body).toEqual({ records: [], total: 2, limit: 2, offset: 2 });
  });
});
