import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readSettings } from "../src/apps/settings.ts";
import { connectPostgres, isPgUniqueViolation, openPostgres } from "../src/db/postgres/connection.ts";
import { migrate, PG_MIGRATIONS } from "../src/db/postgres/migrations.ts";
import { createPgRepositories } from "../src/db/postgres/index.ts";
import { createTestDatabase } from "./_postgres.ts";
import { postgresEngine, type PortedRepositories } from "./_engines.ts";

/**
 * What SQLite gets from its single writer, PostgreSQL must get from row locks and
 * single-statement checks: each operation below is fired many times at once, over a pool of
 * many connections, and the outcome must be exact.
 */

const T0 = Date.UTC(2026, 0, 15, 12);
const N = 24;
let engine: Awaited<ReturnType<typeof postgresEngine>>;
let db: PortedRepositories;
let seq = 0;

const session = (at = T0) => {
  const id = `s${++seq}`;
  return { id, refreshHash: `r-${id}`, createdAt: at, expiresAt: at + 90 * 864e5 };
};
async function newTenant(email = `u${++seq}@x.io`) {
  const id = `t${++seq}`;
  await db.tenants.createWithSession({ id, appId: "app1", email, passwordHash: "h", emailVerifiedAt: null, locale: "en", parentTenantId: null, createdAt: T0 + seq }, session());
  return id;
}
const invite = (tenantId: string, hash: string) => ({
  id: `i${++seq}`,
  appId: "app1",
  tenantId,
  tokenHash: hash,
  note: null,
  createdAt: T0,
  expiresAt: T0 + 3600_000,
  usedAt: null,
  usedByTenantId: null,
});
const times = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => fn(i)));
const settle = <T>(n: number, fn: (i: number) => Promise<T>) => Promise.allSettled(Array.from({ length: n }, (_, i) => fn(i)));

beforeAll(async () => {
  engine = await postgresEngine({ max: N });
  db = engine.db;
  await db.apps.insert({ id: "app1", name: "A", publishableKey: "pk", secretKeyHash: null, ownerId: null, settings: readSettings({}), createdAt: T0, updatedAt: T0 });
});
afterAll(() => engine?.close());

describe("exact under concurrency", () => {
  test("usage increments never pass the limit", async () => {
    const t = await newTenant();
    const results = await times(N * 2, async () => db.billing.incrementUsage({ appId: "app1", tenantId: t, featureKey: "api", period: "monthly", periodStart: T0, by: 1, limit: 17 }));
    expect(results.filter((r) => r !== undefined)).toHaveLength(17);
    expect(results.filter((r) => r !== undefined).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 17 }, (_, i) => i + 1));
    expect(await db.billing.usage("app1", t, "api", "monthly", T0)).toBe(17);
  });

  test("record updates: concurrent merge patches of one record all land, none lost", async () => {
    const t = await newTenant();
    const scope = { appId: "app1", tenantId: t, collection: "notes", indexed: new Set<string>() };
    await db.records.insert(scope, "rec-race", { start: true }, T0, [], null);
    const results = await times(N * 2, (i) => db.records.update(scope, "rec-race", (d) => ({ ...d, [`k${i}`]: i }), T0 + i, []));
    expect(results.every((r) => r !== undefined)).toBe(true);
    const row = await db.records.get(scope, "rec-race");
    expect(Object.keys(JSON.parse(row!.data)).sort()).toEqual(["start", ...Array.from({ length: N * 2 }, (_, i) => `k${i}`)].sort());
  });

  test("record quota: concurrent creates below the cap all get their slot, and once at the cap every create is refused", async () => {
    const t = await newTenant();
    const scope = { appId: "app1", tenantId: t, collection: "notes", indexed: new Set<string>() };
    const results = await settle(N, (i) => db.records.insert(scope, `rec-cap-${i}`, { i }, T0, [], 5));
    expect(results.filter((r) => r.status === "fulfilled").length).toBeGreaterThanOrEqual(5);
    expect((await settle(3, (i) => db.records.insert(scope, `rec-after-${i}`, { i }, T0, [], 5))).every((r) => r.status === "rejected")).toBe(true);
  });

  test("family seats: concurrent joins fill exactly the seats", async () => {
    const owner = await newTenant();
    for (let i = 0; i < N; i++) expect(await db.family.createInvite(invite(owner, `seat-${owner}-${i}`), null)).toBe(true);
    const members = await times(N, () => newTenant());
    const outcomes = await times(N, (i) => db.family.join("app1", `seat-${owner}-${i}`, members[i]!, 3, T0 + 1));
    expect(outcomes.filter((o) => o.kind === "joined")).toHaveLength(3);
    expect(outcomes.filter((o) => o.kind === "full")).toHaveLength(N - 3);
    expect((await db.family.seatCounts("app1", owner, T0 + 1)).members).toBe(3);
  });

  test("family seats: concurrent sign-ups through invites fill exactly the seats", async () => {
    const owner = await newTenant();
    for (let i = 0; i < N; i++) await db.family.createInvite(invite(owner, `su-${owner}-${i}`), null);
    const results = await settle(N, (i) => {
      const id = `fam-${owner}-${i}`;
      return db.tenants.createWithSession(
        { id, appId: "app1", email: `${id}@x.io`, passwordHash: "h", emailVerifiedAt: null, locale: "en", parentTenantId: owner, createdAt: T0 },
        session(),
        (tenantId) => {
          const r = db.family.joinInTransaction("app1", `su-${owner}-${i}`, tenantId, 2, T0 + 1);
          if (r.kind !== "joined") throw new Error(r.kind);
        },
      );
    });
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(2);
    expect(results.filter((r) => r.status === "rejected").map((r) => (r as PromiseRejectedResult).reason.message)).toEqual(Array(N - 2).fill("full"));
    const members = await db.family.members("app1", owner);
    expect(members).toHaveLength(2);
    // Refused sign-ups created nothing.
    const { total } = await db.tenants.list("app1", { emailContains: `fam-${owner}-`, limit: 100, offset: 0 });
    expect(total).toBe(2);
  });

  test("family: two owners joining each other's family at once do not deadlock; one joins", async () => {
    for (let round = 0; round < 5; round++) {
      const a = await newTenant();
      const b = await newTenant();
      await db.family.createInvite(invite(a, `x-${a}`), null);
      await db.family.createInvite(invite(b, `x-${b}`), null);
      const [ab, ba] = await Promise.all([db.family.join("app1", `x-${b}`, a, 5, T0 + 1), db.family.join("app1", `x-${a}`, b, 5, T0 + 1)]);
      expect([ab.kind, ba.kind].filter((k) => k === "joined")).toHaveLength(1);
      expect([ab.kind, ba.kind].sort()).toEqual(expect.arrayContaining(["joined"]));
    }
  });

  test("family invites: concurrent creation stops at the seat limit", async () => {
    const owner = await newTenant();
    const created = await times(N, (i) => db.family.createInvite(invite(owner, `fi-${owner}-${i}`), 4));
    expect(created.filter(Boolean)).toHaveLength(4);
  });

  test("invite tokens: concurrent creation stops at the quota", async () => {
    const t = await newTenant();
    const created = await times(N, (i) => db.invites.create(invite(t, `q-${t}-${i}`), 5));
    expect(created.filter(Boolean)).toHaveLength(5);
    expect(await db.invites.spent("app1", t, T0)).toBe(5);
  });

  test("one invite token, many sign-ups at once: one tenant created, nothing else", async () => {
    const inviter = await newTenant();
    await db.invites.create(invite(inviter, "single-use"), null);
    const results = await settle(N, (i) =>
      db.tenants.createWithSession(
        { id: `inv-${i}`, appId: "app1", email: `inv-${i}@x.io`, passwordHash: "h", emailVerifiedAt: null, locale: "en", parentTenantId: null, createdAt: T0 },
        session(),
        (tenantId) => {
          if (!db.invites.useInTransaction("app1", "single-use", tenantId, T0 + 1)) throw new Error("invalid_token");
        },
      ),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect((await db.tenants.list("app1", { emailContains: "inv-", limit: 100, offset: 0 })).total).toBe(1);
    const used = await db.invites.findByHash("app1", "single-use");
    expect(used?.usedByTenantId).toMatch(/^inv-/);
  });

  test("unique emails: concurrent sign-ups with one email create one tenant; the rest are unique violations", async () => {
    const results = await settle(N, () => newTenant("same@x.io"));
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    for (const r of results) if (r.status === "rejected") expect(isPgUniqueViolation(r.reason)).toBe(true);
  });

  test("refresh rotation: of many presentations of one token outside the grace window, one rotates and the session ends", async () => {
    const t = await newTenant();
    const s = session();
    await db.sessions.create(t, "app1", s);
    const outcomes = await times(N, (i) => db.sessions.rotate(s.refreshHash, { appId: "app1", hash: `${s.id}-next-${i}`, now: T0 + 5, expiresAt: T0 + 864e5, graceMs: -1 }));
    const kinds = outcomes.map((o) => o.kind);
    expect(kinds.filter((k) => k === "rotated")).toHaveLength(1);
    expect(kinds.filter((k) => k === "reused")).toHaveLength(1);
    expect(kinds.filter((k) => k === "ended")).toHaveLength(N - 2);
    expect((await db.sessions.state(s.id))?.endedAt).toBe(T0 + 5);
  });

  test("refresh rotation: concurrent refreshes within the grace window get the one successor, never a sibling", async () => {
    const t = await newTenant();
    const s = session();
    await db.sessions.create(t, "app1", s);
    const outcomes = await times(N, (i) => db.sessions.rotate(s.refreshHash, { appId: "app1", hash: `${s.id}-g-${i}`, now: T0 + 5, expiresAt: T0 + 864e5, graceMs: 10_000 }));
    expect(outcomes.filter((o) => o.kind === "rotated")).toHaveLength(1);
    const repeats = outcomes.filter((o) => o.kind === "repeat");
    expect(repeats).toHaveLength(N - 1);
    // Every repeat hands out the successor the one rotation issued.
    const winner = outcomes.findIndex((o) => o.kind === "rotated");
    expect(new Set(repeats.map((o) => o.successorHash))).toEqual(new Set([`${s.id}-g-${winner}`]));
    expect((await db.sessions.state(s.id))?.endedAt).toBeNull();
  });

  test("file quota: concurrent uploads never pass it", async () => {
    const t = await newTenant();
    const results = await times(N, (i) =>
      db.files.insert({ id: `f-${t}-${i}`, appId: "app1", tenantId: t, pathname: `p/${t}/${i}`, sizeBytes: 100, mimeType: "image/png", originalFilename: null, sha256: "x", createdAt: T0 }, 350),
    );
    expect(results.filter((r) => r === "inserted")).toHaveLength(3);
    expect(await db.files.usedBytes("app1", t)).toBe(300);
  });

  test("email tokens: a verification token used at once by many is used once", async () => {
    const t = await newTenant();
    await db.emailTokens.issue({ hash: `v-${t}`, appId: "app1", tenantId: t, purpose: "verify", createdAt: T0, expiresAt: T0 + 1000 });
    const outcomes = await times(N, () => db.emailTokens.verifyEmail(`v-${t}`, "app1", T0 + 1));
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(outcomes.filter((o) => !o.ok && o.reason === "used")).toHaveLength(N - 1);
  });

  test("webhook queue: concurrent claims take every event exactly once", async () => {
    for (let i = 0; i < 60; i++) await db.webhooks.enqueue({ id: `ev-${i}`, appId: "app1", event: "tenant.created", tenantId: null, data: "x", createdAt: T0 + i });
    const claims = await times(8, () => db.webhooks.claim(10, T0 + 100));
    const ids = claims.flat().map((e) => e.id);
    expect(ids).toHaveLength(60);
    expect(new Set(ids).size).toBe(60);
    for (const c of claims) expect(c.map((e) => e.createdAt)).toEqual([...c.map((e) => e.createdAt)].sort((a, b) => a - b));
    expect(await db.webhooks.queuedCount("app1")).toBe(0);
    expect((await db.webhooks.listDeliveries("app1", 1, 0)).total).toBe(60);
  });

  test("webhook queue: a claim takes at most its limit, whatever plan PostgreSQL picks", async () => {
    // A nested loop that runs the claim's pick of rows again for every queued row: the run
    // after the first delete skips the rows already taken and picks further ones.
    const one = await postgresEngine({ max: 1 });
    try {
      await one.db.apps.insert({ id: "app1", name: "A", publishableKey: "pk", secretKeyHash: null, ownerId: null, settings: readSettings({}), createdAt: T0, updatedAt: T0 });
      for (const setting of ["enable_hashagg", "enable_hashjoin", "enable_mergejoin", "enable_material", "enable_sort", "enable_memoize"]) await one.sql.unsafe(`SET ${setting} = off`);
      for (let i = 0; i < 4; i++) await one.db.webhooks.enqueue({ id: `lim-${i}`, appId: "app1", event: "tenant.created", tenantId: null, data: "x", createdAt: T0 + i });
      expect((await one.db.webhooks.claim(3, T0 + 100)).map((e) => e.id)).toEqual(["lim-0", "lim-1", "lim-2"]);
      expect(await one.db.webhooks.queuedCount("app1")).toBe(1);
      expect((await one.db.webhooks.claim(3, T0 + 100)).map((e) => e.id)).toEqual(["lim-3"]);
    } finally {
      await one.close();
    }
  });

  test("oauth state: consumed once by concurrent callbacks", async () => {
    await db.oauth.createState({ stateHash: "st", appId: "app1", provider: "github", redirectUrl: "https://r", inviteToken: null, codeVerifier: null, browserHash: "b", createdAt: T0, expiresAt: T0 + 600 });
    const outcomes = await times(N, () => db.oauth.consumeState("st", (h) => h === "b", T0 + 1));
    expect(outcomes.filter((o) => o.kind === "ok")).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === "used")).toHaveLength(N - 1);
  });
});

describe("migrations", () => {
  test("several nodes starting at once: one migrates, the others wait and find the schema current", async () => {
    const database = await createTestDatabase({ empty: true });
    const pools = Array.from({ length: 4 }, () => connectPostgres(database.url, { max: 2 }));
    try {
      const ran = await Promise.all(pools.map((sql) => migrate(sql)));
      expect(ran.filter((r) => r.length > 0)).toEqual([PG_MIGRATIONS.map((m) => m.version)]);
      expect(ran.filter((r) => r.length === 0)).toHaveLength(3);
      const rows = await pools[0]!`SELECT version FROM schema_migrations ORDER BY version`;
      expect(rows.map((r) => r.version)).toEqual(PG_MIGRATIONS.map((m) => m.version));
      // The schema works from any of them.
      const repos = createPgRepositories(pools[3]!);
      await repos.meta.set("k", "v");
      expect(await createPgRepositories(pools[1]!).meta.get("k")).toBe("v");
    } finally {
      await Promise.all(pools.map((p) => p.end({ timeout: 1 })));
      await database.drop();
    }
  });

  test("a database migrated by a newer tenantd is refused with the fix", async () => {
    const database = await createTestDatabase({ empty: true });
    const sql = await openPostgres(database.url, { max: 1 });
    try {
      await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`;
      await expect(migrate(sql)).rejects.toThrow(`schema version 999, newer than this tenantd knows (${Math.max(...PG_MIGRATIONS.map((m) => m.version))}). Upgrade tenantd`);
    } finally {
      await sql.end({ timeout: 1 });
      await database.drop();
    }
  });

  test("a failing migration leaves the schema as it was", async () => {
    const database = await createTestDatabase({ empty: true });
    const sql = connectPostgres(database.url, { max: 1 });
    try {
      await expect(migrate(sql, [...PG_MIGRATIONS, { version: 2, name: "broken", sql: "CREATE TABLE later (x INT); SELECT nope FROM nowhere;" }])).rejects.toThrow();
      const [r] = await sql`SELECT to_regclass('later') AS later, to_regclass('tenants') AS tenants, to_regclass('schema_migrations') AS sm`;
      expect(r).toEqual({ later: null, tenants: null, sm: null });
    } finally {
      await sql.end({ timeout: 1 });
      await database.drop();
    }
  });

  test("apps changed by another process show up in this one's cache", async () => {
    const other = createPgRepositories(engine.sql);
    await db.apps.findById("app1"); // this process caches the apps
    await other.apps.insert({ id: "app-other", name: "O", publishableKey: "pk-other", secretKeyHash: null, ownerId: null, settings: readSettings({}), createdAt: T0, updatedAt: T0 });
    await expect.poll(async () => (await db.apps.findByKey("pk-other"))?.id, { timeout: 5000 }).toBe("app-other");
    await other.apps.remove("app-other");
    await expect.poll(() => db.apps.findById("app-other"), { timeout: 5000 }).toBeUndefined();
  });
});
