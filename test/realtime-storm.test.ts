import { describe, expect, it } from "vitest";
import { serveHttp, signupTenant, startBackend, type TestTenant } from "./_helpers.ts";
import { openSse, type SseClient, type SseEvent } from "./_sse.ts";

/**
 * A reconnect storm in small (issue 41; bench/realtime.mjs runs it with 10,000 streams):
 * every stream of several tenants drops at once while writes go on, and reconnects with its
 * Last-Event-ID; each stream must then have seen every write that matches its filter, in
 * order, exactly once.
 */

const TENANTS = 4;
const PER_TENANT = 8;
const BUCKETS = 4;

const created = (e: SseEvent) => e.event === "created";

describe("realtime reconnect storm", () => {
  it("every stream drops and resumes during writes: no event lost or repeated, in order", async () => {
    const t = await startBackend({ realtime: { maxConnectionsPerTenant: PER_TENANT * 2 } });
    const { url } = await serveHttp(t.backend);
    const tenants: TestTenant[] = [];
    for (let i = 0; i < TENANTS; i++) tenants.push(await signupTenant(t));
    const headersOf = (tenant: TestTenant) => ({ authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id });
    const subscribe = async (tenant: TestTenant, sse: SseClient, bucket: number) => {
      const stream = (await sse.next((e) => e.event === "ready")).data.stream;
      const res = await fetch(`${url}/api/v1/realtime/subscriptions`, { method: "POST", headers: { ...headersOf(tenant), "content-type": "application/json" }, body: JSON.stringify({ stream, collection: "items", filter: { bucket } }) });
      expect(res.status, await res.text()).toBe(201);
    };
    const streams: { tenant: number; bucket: number; first: SseClient; second?: SseClient }[] = [];
    for (let i = 0; i < TENANTS * PER_TENANT; i++) {
      const tenant = Math.floor(i / PER_TENANT);
      const first = await openSse(`${url}/api/v1/realtime`, headersOf(tenants[tenant]!));
      await subscribe(tenants[tenant]!, first, i % BUCKETS);
      streams.push({ tenant, bucket: i % BUCKETS, first });
    }

    const writes: { tenant: number; bucket: number; id: string }[] = [];
    let stop = false;
    const writer = (async () => {
      for (let n = 0; !stop || n < 120; n++) {
        const tenant = n % TENANTS;
        const bucket = Math.floor(n / TENANTS) % BUCKETS;
        const res = await fetch(`${url}/api/v1/data/items`, { method: "POST", headers: { ...headersOf(tenants[tenant]!), "content-type": "application/json" }, body: JSON.stringify({ data: { bucket, n } }) });
        expect(res.status).toBe(201);
        writes.push({ tenant, bucket, id: ((await res.json()) as { record: { id: string } }).record.id });
      }
    })();
    await new Promise((r) => setTimeout(r, 300));
    // The storm: every stream drops at once, then all reconnect at once with their position.
    for (const s of streams) s.first.close();
    await Promise.all(
      streams.map(async (s) => {
        s.second = await openSse(`${url}/api/v1/realtime`, { ...headersOf(tenants[s.tenant]!), "last-event-id": s.first.lastEventId });
        expect(s.second.status).toBe(200);
        await subscribe(tenants[s.tenant]!, s.second, s.bucket);
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    stop = true;
    await writer;

    for (const s of streams) {
      const expected = writes.filter((w) => w.tenant === s.tenant && w.bucket === s.bucket).map((w) => w.id);
      const before = s.first.events.filter(created).map((e) => e.data.id);
      await s.second!.collect(expected.length - before.length, created, 10_000).catch(() => undefined);
      const got = [...before, ...s.second!.events.filter(created).map((e) => e.data.id)];
      expect(got, `stream ${streams.indexOf(s)}`).toEqual(expected);
      expect(s.second!.events.some((e) => e.event === "reset")).toBe(false);
    }
  }, 60_000);
});
