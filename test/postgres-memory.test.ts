import { describe, expect, test } from "vitest";
import postgres from "postgres";
import { afterThisTest, expectError, signupTenant, startBackend, tempDir, type TestBackend, type TestTenant } from "./_helpers.ts";
import { createTestDatabase } from "./_postgres.ts";
import { openPostgres } from "../src/db/postgres/connection.ts";
import { createPgRepositories } from "../src/db/postgres/index.ts";
import type { PgChanges } from "../src/db/postgres/changes.ts";

/**
 * What a PostgreSQL node keeps in memory (list totals, session states, tenants, entitlements)
 * stays exact when another node or process writes: two backends on one database, and plain
 * SQL standing in for the CLI.
 */
let A: TestBackend;
let B: TestBackend;
let sql: postgres.Sql;

/** Two nodes on one fresh database, and a plain SQL connection to it; all closed after the test. */
async function twoNodes() {
  const database = await createTestDatabase();
  // Cleanups run last-registered first: this one runs after both nodes have closed. Dropped
  // under live nodes, the database's forced disconnects met a write postgres.js had queued
  // (porsager/postgres#1154: an uncaught TypeError in the test process).
  afterThisTest(() => database.drop());
  const dataDir = tempDir();
  A = await startBackend({ dataDir, database: { url: database.url, pool: { max: 4 } } });
  B = await startBackend({ dataDir, database: { url: database.url, pool: { max: 4 } } });
  sql = postgres(database.url, { max: 1, onnotice: () => {} });
  afterThisTest(() => sql.end({ timeout: 5 }));
}

const filter = (f: unknown) => `filter=${encodeURIComponent(JSON.stringify(f))}`;
const create = (t: TestBackend, who: TestTenant, data: unknown) => t.request("POST", "/api/v1/data/notes", { bearer: who.bearer, body: { data } });

/** Asks until `ok` holds, at most `ms`; returns the last reply. */
async function within<T>(ms: number, ask: () => Promise<T>, ok: (r: T) => boolean): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const r = await ask();
    if (ok(r) || Date.now() > until) return r;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe("list totals on PostgreSQL", () => {
  test("a total counted on node A includes a record node B wrote a moment before, and forgets one B deleted", async () => {
    await twoNodes();
    const who = await signupTenant(A);
    for (const n of [1, 2, 3]) expect((await create(A, who, { n, tag: "odd" })).status).toBe(201);
    const list = () => A.request("GET", `/api/v1/data/notes?${filter({ tag: "odd" })}&limit=1`, { bearer: who.bearer });
    // Counted once, then answered from the kept total.
    expect((await list()).body.total).toBe(3);
    expect((await list()).body.total).toBe(3);
    const made = await create(B, who, { n: 4, tag: "odd" });
    expect((await list()).body.total).toBe(4);
    expect((await B.request("DELETE", `/api/v1/data/notes/${made.body.record.id}`, { bearer: who.bearer })).status).toBe(204);
    expect((await list()).body.total).toBe(3);
    // A write straight into the table (no tenantd at all) is seen as well.
    await sql`DELETE FROM records WHERE tenant_id = ${who.id} AND data::jsonb ->> 'n' = '1'`;
    expect((await list()).body.total).toBe(2);
    // Unfiltered lists read the kept count of the collection.
    expect((await A.request("GET", "/api/v1/data/notes", { bearer: who.bearer })).body.total).toBe(2);
  });

  test("the kept counts agree with the rows after creates, updates, upserts and deletes on both nodes", async () => {
    await twoNodes();
    const who = await signupTenant(A);
    const other = await signupTenant(B);
    for (let i = 0; i < 5; i++) await create(i % 2 ? A : B, who, { i, text: "x".repeat(i * 10) });
    await create(A, other, { i: 0 });
    const made = await create(B, who, { i: 9 });
    expect((await A.request("PUT", `/api/v1/data/notes/${made.body.record.id}`, { bearer: who.bearer, body: { data: { i: 9, more: "longer than before" } } })).status).toBe(200);
    expect((await B.request("PUT", `/api/v1/data/notes/${made.body.record.id}`, { bearer: who.bearer, body: { data: { i: 9 } } })).status).toBe(200);
    const listed = await A.request("GET", "/api/v1/data/notes?limit=1", { bearer: who.bearer });
    const [counted] = await sql<{ n: string; b: string }[]>`SELECT COUNT(*) AS n, SUM(octet_length(data)) AS b FROM records WHERE tenant_id = ${who.id}`;
    const [kept] = await sql<{ records: string; bytes: string }[]>`SELECT SUM(records) AS records, SUM(bytes) AS bytes FROM record_scopes WHERE tenant_id = ${who.id} AND collection = 'notes'`;
    expect({ records: Number(kept!.records), bytes: Number(kept!.bytes) }).toEqual({ records: Number(counted!.n), bytes: Number(counted!.b) });
    expect(listed.body.total).toBe(6);
  });
});

test("a tenant's counts stay a few rows per collection however many writes, sums and totals exact on both nodes", async () => {
  await twoNodes();
  const who = await signupTenant(A);
  const rows = () => sql<{ n: string }[]>`SELECT COUNT(*) AS n FROM record_scopes WHERE tenant_id = ${who.id}`.then(([r]) => Number(r!.n));
  const list = (t: TestBackend) => t.request("GET", `/api/v1/data/notes?${filter({ tag: "y" })}`, { bearer: who.bearer });
  expect((await list(A)).body.total).toBe(0);
  // Concurrent creates through both nodes: each connection adds to its own stripe (16 at most).
  await Promise.all(Array.from({ length: 60 }, (_, i) => create(i % 2 ? A : B, who, { i, tag: i % 4 ? "x" : "y" }).then((r) => expect(r.status).toBe(201))));
  expect(await rows()).toBeLessThanOrEqual(16);
  const [sums] = await sql<{ records: string; bytes: string }[]>`SELECT SUM(records) AS records, SUM(bytes) AS bytes FROM record_scopes WHERE tenant_id = ${who.id}`;
  const [counted] = await sql<{ b: string }[]>`SELECT SUM(octet_length(data)) AS b FROM records WHERE tenant_id = ${who.id}`;
  expect({ records: Number(sums!.records), bytes: Number(sums!.bytes) }).toEqual({ records: 60, bytes: Number(counted!.b) });
  expect((await list(A)).body.total).toBe(15);
  expect((await list(B)).body.total).toBe(15);
  await create(B, who, { tag: "y" });
  expect((await list(A)).body.total).toBe(16);
  expect((await A.request("GET", "/api/v1/data/notes", { bearer: who.bearer })).body.total).toBe(61);
  expect(await rows()).toBeLessThanOrEqual(16);
});

describe("sessions and tenants kept in memory on PostgreSQL", () => {
  test("a session ended by another process (plain SQL, as the CLI) is refused on both nodes within a second", async () => {
    await twoNodes();
    const who = await signupTenant(A);
    for (const t of [A, B]) expect((await t.request("GET", "/api/v1/auth/me", { bearer: who.bearer })).status).toBe(200);
    await sql`UPDATE sessions SET ended_at = ${Date.now()}, end_reason = 'cli' WHERE tenant_id = ${who.id}`;
    for (const t of [A, B]) {
      const r = await within(1000, () => t.request("GET", "/api/v1/auth/me", { bearer: who.bearer }), (x) => x.status === 401);
      expectError(r, 401, "session_ended");
    }
  });

  test("a logout answers 401 on the same node at once, with no wait for the announcement", async () => {
    for (let i = 0; i < 5; i++) {
      await twoNodes();
    const who = await signupTenant(A);
      expect((await A.request("GET", "/api/v1/auth/me", { bearer: who.bearer })).status).toBe(200);
      expect((await A.request("POST", "/api/v1/auth/logout", { bearer: who.bearer, body: {} })).status).toBe(204);
      expectError(await A.request("GET", "/api/v1/auth/me", { bearer: who.bearer }), 401, "session_ended");
    }
  });

  test("a session whose expiry moved later unannounced (a refresh) is read again, not refused, once its kept expiry passes", async () => {
    const database = await createTestDatabase();
    const db = await openPostgres(database.url, { max: 2 });
    afterThisTest(async () => {
      await db.end({ timeout: 5 });
      await database.drop();
    });
    // A feed that is live and announces nothing on its own: only what the repositories announce.
    const handlers: ((p: string) => void)[] = [];
    const feed: PgChanges = { live: true, epoch: 1, on: (h) => void handlers.push(h), announce: (p) => handlers.forEach((h) => h(p)), start: async () => {}, close: async () => {} };
    const repos = createPgRepositories(db, feed);
    const now = Date.now();
    await db`INSERT INTO apps (id, name, publishable_key, settings, created_at, updated_at) VALUES ('app1', 'A', 'pk1', '{}', ${now}, ${now})`;
    await db`INSERT INTO tenants (id, app_id, email, locale, created_at) VALUES ('t1', 'app1', 'a@x.io', 'en', ${now})`;
    await db`INSERT INTO sessions (id, tenant_id, app_id, created_at, expires_at) VALUES ('s1', 't1', 'app1', ${now}, ${now + 1000})`;
    expect((await repos.sessions.state("s1", now))?.expiresAt).toBe(now + 1000);
    await db`UPDATE sessions SET expires_at = ${now + 90_000} WHERE id = 's1'`;
    // Kept and still valid: answered from memory.
    expect((await repos.sessions.state("s1", now + 500))?.expiresAt).toBe(now + 1000);
    // Looks expired in memory: read again, and alive.
    expect((await repos.sessions.state("s1", now + 2000))?.expiresAt).toBe(now + 90_000);
  });

  test("a tenant's change made elsewhere shows in `me` within a second", async () => {
    await twoNodes();
    const who = await signupTenant(A);
    expect((await A.request("GET", "/api/v1/auth/me", { bearer: who.bearer })).body.tenant.emailVerifiedAt).toBe(null);
    await sql`UPDATE tenants SET email_verified_at = ${Date.now()} WHERE id = ${who.id}`;
    const r = await within(1000, () => A.request("GET", "/api/v1/auth/me", { bearer: who.bearer }), (x) => typeof x.body?.tenant?.emailVerifiedAt === "string");
    expect(typeof r.body.tenant.emailVerifiedAt).toBe("string");
  });

  test("while the change feed's connection is cut, sessions ended meanwhile are still refused", async () => {
    await twoNodes();
    const who = await signupTenant(A);
    const live = await signupTenant(A);
    expect((await A.request("GET", "/api/v1/auth/me", { bearer: who.bearer })).status).toBe(200);
    expect((await A.request("GET", "/api/v1/auth/me", { bearer: live.bearer })).status).toBe(200);
    const cut = await sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'tenantd-changes'`;
    expect(cut.length).toBe(2);
    await sql`UPDATE sessions SET ended_at = ${Date.now()}, end_reason = 'cli' WHERE tenant_id = ${who.id}`;
    const r = await within(1000, () => A.request("GET", "/api/v1/auth/me", { bearer: who.bearer }), (x) => x.status === 401);
    expectError(r, 401, "session_ended");
    expect((await A.request("GET", "/api/v1/auth/me", { bearer: live.bearer })).status).toBe(200);
    // The feed comes back: both nodes listen again.
    const back = await within(
      3000,
      () => sql`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'tenantd-changes'`,
      (rows) => rows.length === 2,
    );
    expect(back.length).toBe(2);
  });
});
