import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomBytes } from "node:crypto";
import { createCore, type Core } from "../src/core.ts";
import { runMaintenance, MAINTENANCE_EVERY_MS } from "../src/maintenance.ts";
import { ensureDefaultApp } from "../src/bootstrap.ts";
import { createTestDatabase } from "./_postgres.ts";
import { tempDir, testClock } from "./_helpers.ts";

/**
 * The shared pieces behind several nodes, one level below HTTP: three cores on one
 * PostgreSQL database stand for three nodes (each has its own pool, caches and timers).
 */

const clock = testClock();
const secretKey = randomBytes(32).toString("hex");
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let nodes: Core[];

const node = () => createCore({ database: { url: db.url, pool: { max: 4 } }, secretKey, dataDir: tempDir(), clock, logger: "error" });

beforeAll(async () => {
  db = await createTestDatabase();
  nodes = [node(), node(), node()];
  await Promise.all(nodes.map((n) => n.ready));
});
afterAll(async () => {
  await Promise.all((nodes ?? []).map((n) => n.close()));
  await db?.drop();
});

describe("shared state across nodes on PostgreSQL", () => {
  it("nodes starting together on an empty database create one default app", async () => {
    const created = await Promise.all(nodes.map((n) => ensureDefaultApp(n)));
    expect(created.filter(Boolean)).toHaveLength(1);
    expect(await nodes[1]!.db.apps.count()).toBe(1);
    // A later start finds it.
    expect(await ensureDefaultApp(nodes[2]!)).toBeUndefined();
  });

  it("housekeeping runs on one node per hour, whichever asks", async () => {
    const [a, b, c] = nodes as [Core, Core, Core];
    const app = (await a.db.apps.list())[0]!;
    const long = 40 * 24 * 3600_000;
    await a.db.tenants.createWithSession(
      { id: "t_old", appId: app.id, email: "old@example.com", passwordHash: "h", emailVerifiedAt: null, locale: "en", parentTenantId: null, createdAt: clock() - long },
      { id: "s_old", refreshHash: "r_old", createdAt: clock() - long, expiresAt: clock() - long + 1000 },
    );
    const ran = await Promise.all([a, b, c, a, b, c].map((n) => runMaintenance(n)));
    expect(ran.filter(Boolean)).toHaveLength(1);
    expect(await b.db.sessions.state("s_old")).toBeUndefined();
    // Within the hour every node skips it.
    clock.advance(MAINTENANCE_EVERY_MS - 1000);
    expect(await Promise.all(nodes.map((n) => runMaintenance(n)))).toEqual([false, false, false]);
    clock.advance(1000);
    expect((await Promise.all(nodes.map((n) => runMaintenance(n)))).filter(Boolean)).toHaveLength(1);
  });

  it("rate-limit windows count every node's requests exactly, and restart when they end", async () => {
    const cluster = (n: Core) => n.db.cluster!;
    const key = `login|ip|${randomBytes(4).toString("hex")}`;
    const counts = await Promise.all(Array.from({ length: 60 }, (_, i) => cluster(nodes[i % 3]!).countRequests([key], 60_000, clock())));
    expect(counts.map((c) => c[0]!.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(new Set(counts.map((c) => c[0]!.resetAt))).toEqual(new Set([clock() + 60_000]));
    clock.advance(60_000);
    expect((await cluster(nodes[2]!).countRequests([key, `${key}-email`], 60_000, clock())).map((c) => c.count)).toEqual([1, 1]);
    // Ended windows are swept by whichever node sweeps.
    clock.advance(60_000);
    expect(await cluster(nodes[0]!).sweepCounters(clock(), 0)).toBeGreaterThanOrEqual(2);
  });

  it("sign-in failures are shared, forgotten after a long quiet time, cleared on success", async () => {
    const [a, b, c] = nodes.map((n) => n.db.cluster!) as [NonNullable<Core["db"]["cluster"]>, NonNullable<Core["db"]["cluster"]>, NonNullable<Core["db"]["cluster"]>];
    await Promise.all([a, b, c, a, b, c].map((n) => n.recordLoginFailure("tenant|x|u@example.com", clock(), clock() - 3600_000)));
    expect(await b.loginFailures("tenant|x|u@example.com")).toEqual({ count: 6, last: clock() });
    clock.advance(3600_000 + 1);
    await c.recordLoginFailure("tenant|x|u@example.com", clock(), clock() - 3600_000);
    expect((await a.loginFailures("tenant|x|u@example.com"))?.count).toBe(1);
    await a.clearLoginFailures("tenant|x|u@example.com");
    expect(await c.loginFailures("tenant|x|u@example.com")).toBeUndefined();
  });

  it("an account's failures are cleared together, and a device that signed in is known on every node until it expires", async () => {
    const [a, b, c] = nodes.map((n) => n.db.cluster!) as [NonNullable<Core["db"]["cluster"]>, NonNullable<Core["db"]["cluster"]>, NonNullable<Core["db"]["cluster"]>];
    for (const key of ["tenant|x|v%40example.com|*", "tenant|x|v%40example.com|@192.0.2.1", "tenant|x|w%40example.com|*"]) await a.recordLoginFailure(key, clock(), 0);
    await b.clearLoginFailuresFrom("tenant|x|v%40example.com|");
    expect(await c.loginFailures("tenant|x|v%40example.com|*")).toBeUndefined();
    expect(await c.loginFailures("tenant|x|v%40example.com|@192.0.2.1")).toBeUndefined();
    expect((await c.loginFailures("tenant|x|w%40example.com|*"))?.count).toBe(1);

    await a.rememberDevice("tenant|x|v%40example.com|@192.0.2.1", clock() + 1000);
    expect(await b.knownDevice("tenant|x|v%40example.com|@192.0.2.1", clock())).toBe(true);
    expect(await b.knownDevice("tenant|x|v%40example.com|@192.0.2.2", clock())).toBe(false);
    expect(await c.knownDevice("tenant|x|v%40example.com|@192.0.2.1", clock() + 1000)).toBe(false);
  });
});

describe("on SQLite", () => {
  it("there is no shared state: counters stay in the process and housekeeping always runs", async () => {
    const core = createCore({ dataDir: tempDir(), clock, logger: "error" });
    try {
      expect(core.db.cluster).toBeUndefined();
      expect(await runMaintenance(core)).toBe(true);
      expect(await runMaintenance(core)).toBe(true);
    } finally {
      await core.close();
    }
  });
});
