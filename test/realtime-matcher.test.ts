import { describe, expect, it } from "vitest";
import { serveHttp, signupTenant, startBackend } from "./_helpers.ts";
import { recordFilterGenerator, seededRandom } from "./_random.ts";
import { openSse } from "./_sse.ts";
import { parseFilter } from "../src/data/query.ts";
import { compileMatcher, type FeedRecord } from "../src/realtime/matcher.ts";

/**
 * The realtime matcher against the list endpoint, on this run's engine: the same records,
 * hundreds of random filters (mixed types, missing fields, nulls, nested paths, code point
 * order, metadata), and the ids each filter lets through must be the same. The last test
 * does it end to end: filters subscribed on a live stream, records written, events compared
 * with what the list answers.
 */

const SCALARS = [0, 1, -1, 2, 5, 5.5, -3.25, 10, 100, 1e6, "", "5", "1", "a", "abc", "Abc", "b", "z", "é", "Zürich", "10", "\uffff", "😀", "\u{10000}a", true, false, null];
const OBJECTS = [{ a: 5 }, { a: "5" }, { b: 1, a: 2 }, { a: 2, b: 1 }, [], [1, 2], ["a"], [null], {}, { a: { b: [1, "x"] } }];
const PATHS = ["v", "w", "n.x", "n.y", "n", "n.x.deep", "missing"];

const { randomValue, randomRecord, randomCondition } = recordFilterGenerator({ scalars: SCALARS, objects: OBJECTS, paths: PATHS });

const randomFilter = (r: () => number, times: number[], ids: string[]) => Object.fromEntries(Array.from({ length: Math.floor(r() * 4) }, () => randomCondition(r, times, ids)));

interface ApiRecord {
  id: string;
  data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

const asFeed = (rec: ApiRecord): FeedRecord => ({ id: rec.id, data: rec.data, createdAt: Date.parse(rec.createdAt), updatedAt: Date.parse(rec.updatedAt) });

async function seeded(count: number, seed: number) {
  const t = await startBackend();
  const { url } = await serveHttp(t.backend);
  const tenant = await signupTenant(t);
  const headers = { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": tenant.bearer.appId, "content-type": "application/json" };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  };
  const r = seededRandom(seed);
  for (let i = 0; i < count; i++) {
    t.clock.advance(1000);
    const created = await call("POST", "/api/v1/data/things", { data: randomRecord(r) });
    expect(created.status).toBe(201);
    // Some records are updated later, so $updatedAt differs from $createdAt.
    if (r() < 0.3) {
      t.clock.advance(500);
      expect((await call("PUT", `/api/v1/data/things/${created.body.record.id}`, { data: { w: randomValue(r) } })).status).toBe(200);
    }
  }
  const list = async (filter: unknown): Promise<string[]> => {
    const res = await call("GET", `/api/v1/data/things?limit=1000&sort=${encodeURIComponent('{"$id":1}')}&filter=${encodeURIComponent(JSON.stringify(filter))}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.records as ApiRecord[]).map((x) => x.id);
  };
  const all = (await call("GET", `/api/v1/data/things?limit=1000&sort=${encodeURIComponent('{"$id":1}')}`)).body.records as ApiRecord[];
  return { t, url, headers, call, list, all, r };
}

describe("realtime matcher: the list filter's answers", () => {
  it("400 random filters: the matcher and the list endpoint let the same records through", async () => {
    const { list, all, r } = await seeded(120, 11);
    const times = all.flatMap((x) => [Date.parse(x.createdAt), Date.parse(x.updatedAt)]);
    const ids = all.map((x) => x.id);
    const disagreements: unknown[] = [];
    let matchedSome = 0;
    for (let i = 0; i < 400; i++) {
      const filter = randomFilter(r, times, ids);
      const matcher = compileMatcher(parseFilter(JSON.stringify(filter)));
      const expected = await list(filter);
      const got = all.filter((x) => matcher(asFeed(x))).map((x) => x.id);
      if (expected.length > 0) matchedSome++;
      if (JSON.stringify(got) !== JSON.stringify(expected)) disagreements.push({ filter, list: expected.length, matcher: got.length, onlyList: expected.filter((x) => !got.includes(x)).slice(0, 3), onlyMatcher: got.filter((x) => !expected.includes(x)).slice(0, 3) });
    }
    expect(disagreements).toEqual([]);
    // The generator is not degenerate: many filters match something, and not everything.
    expect(matchedSome).toBeGreaterThan(100);
  });

  it("a live stream's created events for 30 random filters are exactly what the list answers", async () => {
    const { url, headers, call, list, all, r } = await seeded(20, 23);
    const times = all.flatMap((x) => [Date.parse(x.createdAt), Date.parse(x.updatedAt)]);
    const sse = await openSse(`${url}/api/v1/realtime`, headers);
    const stream = (await sse.next((e) => e.event === "ready")).data.stream as string;
    const filters = Array.from({ length: 30 }, () => randomFilter(r, times, all.map((x) => x.id)).valueOf());
    const subs = await call("POST", "/api/v1/realtime/subscriptions", { stream, subscriptions: filters.map((filter) => ({ collection: "things", filter })) });
    expect(subs.status).toBe(201);
    const subIds = (subs.body.subscriptions as { id: string }[]).map((s) => s.id);
    const before = new Set(all.map((x) => x.id));
    const fresh: string[] = [];
    for (let i = 0; i < 25; i++) fresh.push((await call("POST", "/api/v1/data/things", { data: randomRecord(r) })).body.record.id);
    const marker = (await call("POST", "/api/v1/data/marker", { data: {} })).body.record.id;
    await call("POST", "/api/v1/realtime/subscriptions", { stream, collection: "marker" });
    await call("PUT", `/api/v1/data/marker/${marker}`, { data: { done: true } });
    await sse.next((e) => e.event === "updated" && e.data.collection === "marker", 10_000);
    const events = sse.events.filter((e) => e.event === "created");
    for (const [i, filter] of filters.entries()) {
      const expected = (await list(filter)).filter((id) => !before.has(id));
      const got = events.filter((e) => e.data.subscriptions.includes(subIds[i])).map((e) => e.data.id);
      expect(got.sort(), JSON.stringify(filter)).toEqual(expected.sort());
    }
    expect(fresh.length).toBe(25);
  });
});
