import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { billingBackend, DAY } from "./billing-fixtures.ts";
import { generateKeyPairSync } from "node:crypto";
import { ACCESS_TOKEN_TTL_SECONDS, createAccessTokens, tokenHeader } from "../src/auth/access-token.ts";
import { parseList, PARSED_LIST_CACHE_SIZE } from "../src/data/query.ts";
import { tokenPairJson } from "../src/auth/sessions.ts";
import { introspectionJson } from "../src/auth/introspect.ts";
import { FRESHNESS_MS } from "../src/db/shared.ts";

/**
 * Hot-path caches kept in memory on SQLite (src/db/sqlite/record-counts.ts, the effective
 * entitlements in src/billing/effective.ts): whatever
 * changes what they hold — a write through the API, a cascade — must show on the very next
 * request; another process's write within FRESHNESS_MS.
 */

const create = (t: TestBackend, tenant: TestTenant, collection = "notes", data: object = { n: 1 }) =>
  t.request("POST", `/api/v1/data/${collection}`, { bearer: tenant.bearer, body: { data } });

/** Writes on a second connection to the same file, as the CLI or a second server would. */
function otherProcess(t: TestBackend, write: (db: Database.Database) => void) {
  const other = new Database(join(t.dataDir, "tenantd.db"));
  try {
    write(other);
  } finally {
    other.close();
  }
}

describe("records quota under the in-memory record count", () => {
  it("counts every collection, frees a slot on delete, and counts upserts", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { records: 3 }, collections: { keyed: { unique: ["key"] } } } });
    const tenant = await signupTenant(t);
    const first = await create(t, tenant);
    expect(first.status).toBe(201);
    expect((await create(t, tenant, "other")).status).toBe(201);
    const up = await t.request("POST", "/api/v1/data/keyed/upsert", { bearer: tenant.bearer, body: { data: { key: "a" } } });
    expect(up.status).toBe(201);
    expectError(await create(t, tenant), 402, "limit_reached");
    // An upsert that updates adds nothing; one that would insert is a create.
    expect((await t.request("POST", "/api/v1/data/keyed/upsert", { bearer: tenant.bearer, body: { data: { key: "a", n: 2 } } })).status).toBe(200);
    expect((await t.request("DELETE", `/api/v1/data/notes/${first.body.record.id}`, { bearer: tenant.bearer })).status).toBeLessThan(300);
    expect((await create(t, tenant)).status).toBe(201);
    expectError(await create(t, tenant), 402, "limit_reached");
    // Another tenant has its own count.
    const other = await signupTenant(t);
    for (let i = 0; i < 3; i++) expect((await create(t, other)).status).toBe(201);
    expectError(await create(t, other), 402, "limit_reached");
  });

  it("records deleted or added by another process are counted on the next create", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { records: 2 } } });
    const tenant = await signupTenant(t);
    const a = await create(t, tenant);
    expect((await create(t, tenant)).status).toBe(201);
    expectError(await create(t, tenant), 402, "limit_reached");
    otherProcess(t, (db) => db.prepare("DELETE FROM records WHERE id = ?").run(a.body.record.id));
    expect((await create(t, tenant)).status).toBe(201);
    expectError(await create(t, tenant), 402, "limit_reached");
    otherProcess(t, (db) => db.prepare("DELETE FROM records WHERE tenant_id = ?").run(tenant.id));
    expect((await create(t, tenant)).status).toBe(201);
    otherProcess(t, (db) => {
      const row = db.prepare("SELECT * FROM records WHERE tenant_id = ?").get(tenant.id) as Record<string, unknown>;
      db.prepare("INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)").run(
        "rec_fromcli", row.app_id, row.tenant_id, row.collection, row.data, row.created_at, row.updated_at,
      );
    });
    expectError(await create(t, tenant), 402, "limit_reached");
  });

  it("records removed on this connection without the records repository (a cascade, any SQL) are seen", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { quotas: { records: 1 } } });
    const tenant = await signupTenant(t);
    expect((await create(t, tenant)).status).toBe(201);
    expectError(await create(t, tenant), 402, "limit_reached");
    t.backend.core.sqlite.prepare("DELETE FROM records WHERE tenant_id = ?").run(tenant.id);
    expect((await create(t, tenant)).status).toBe(201);
    expectError(await create(t, tenant), 402, "limit_reached");
  });
});

describe("usage limits under the in-memory effective entitlements", () => {
  it("a plan edit, a gift, its removal and its expiry each change the limit on the next increment", async () => {
    const b = await billingBackend();
    await b.settings({ defaultEntitlements: { calls: 1 } });
    const plan = await b.plan({ name: "Pro", slug: "pro", entitlements: { calls: 3 } });
    const tenant = await b.tenant();
    const increment = () => b.tenantPost(tenant, "/usage/calls/increment", {});
    expect((await increment()).body).toMatchObject({ count: 1, limit: 1 });
    expectError(await increment(), 402, "limit_reached");
    await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId: plan.id, expiresAt: new Date(b.t.clock() + DAY).toISOString() });
    expect((await increment()).body).toMatchObject({ count: 2, limit: 3 });
    await b.admin("PATCH", `/plans/${plan.id}`, { entitlements: { calls: 2 } });
    expectError(await increment(), 402, "limit_reached");
    await b.admin("PATCH", `/plans/${plan.id}`, { entitlements: { calls: 5 } });
    expect((await increment()).body).toMatchObject({ count: 3, limit: 5 });
    b.t.clock.advance(DAY);
    expectError(await increment(), 402, "limit_reached");
    await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId: plan.id });
    expect((await increment()).body).toMatchObject({ count: 4, limit: 5 });
    expect((await b.admin("DELETE", `/tenants/${tenant.id}/billing/gift`)).status).toBe(204);
    expectError(await increment(), 402, "limit_reached");
    // The app's default entitlements are part of the answer too.
    await b.settings({ defaultEntitlements: { calls: 10 } });
    expect((await increment()).body).toMatchObject({ count: 5, limit: 10 });
  });

  it("a subscription written by another process (the CLI) is seen within 0.1 s, as any other CLI change", async () => {
    const b = await billingBackend();
    await b.settings({ defaultEntitlements: { calls: 1 } });
    const plan = await b.plan({ name: "Pro", slug: "pro", entitlements: { calls: 3 } });
    const tenant = await b.tenant();
    const increment = () => b.tenantPost(tenant, "/usage/calls/increment", {});
    expect((await increment()).status).toBe(200);
    expectError(await increment(), 402, "limit_reached");
    otherProcess(b.t, (db) =>
      db
        .prepare("INSERT INTO billing_subscriptions (tenant_id, source, app_id, plan_id, status, created_at, updated_at) VALUES (?, 'gift', ?, ?, 'active', ?, ?)")
        .run(tenant.id, b.t.app.id, plan.id, b.t.clock(), b.t.clock()),
    );
    b.t.clock.advance(FRESHNESS_MS);
    expect((await increment()).body).toMatchObject({ count: 2, limit: 3 });
    otherProcess(b.t, (db) => db.prepare("DELETE FROM billing_subscriptions WHERE tenant_id = ?").run(tenant.id));
    b.t.clock.advance(FRESHNESS_MS);
    expectError(await increment(), 402, "limit_reached");
  });
});

describe("list totals under the total cache", () => {
  // A list reads its page outside a transaction and takes a remembered total only when
  // data_version, read after the page, is unchanged (src/db/sqlite/records.ts).
  it("are not taken from memory when another process commits between the page and the data_version read", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    for (let i = 0; i < 3; i++) expect((await create(t, tenant, "items", { open: true })).status).toBe(201);
    const list = () => t.request("GET", `/api/v1/data/items?filter=${encodeURIComponent('{"open":true}')}&limit=2`, { bearer: tenant.bearer });
    expect((await list()).body.total).toBe(3); // a full page: counted, and remembered
    const statement = Object.getPrototypeOf(t.backend.core.sqlite.prepare("SELECT 1")) as Record<"all" | "get", (...args: unknown[]) => unknown>;
    const { all, get } = statement;
    let pageRead = false;
    let inserted = false;
    statement.all = function (this: { source: string }, ...args: unknown[]) {
      if (this.source.startsWith("SELECT seq, id, data")) pageRead = true;
      return all.apply(this, args);
    };
    statement.get = function (this: { source: string }, ...args: unknown[]) {
      if (pageRead && !inserted && this.source === "PRAGMA data_version") {
        inserted = true;
        const at = Date.now() + 60_000;
        otherProcess(t, (db) =>
          db
            .prepare("INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at) VALUES ('rec_between', ?, ?, 'items', '{\"open\":true}', ?, ?)")
            .run(t.app.id, tenant.id, at, at),
        );
      }
      return get.apply(this, args);
    };
    try {
      const res = await list();
      expect(inserted).toBe(true);
      // The record made between the two reads is the newest: the page the total counts holds it.
      expect({ first: res.body.records[0].id, n: res.body.records.length, total: res.body.total }).toEqual({ first: "rec_between", n: 2, total: 4 });
    } finally {
      Object.assign(statement, { all, get });
    }
  });
});

describe("record lists under the compiled-list cache", () => {
  // A list is compiled once per filter, sort, app, collection, page size and index set, and
  // then serves every tenant with its own id bound (src/db/sqlite/records.ts).
  const list = (t: TestBackend, tenant: TestTenant, filter: object, limit = 2, collection = "items") =>
    t.request("GET", `/api/v1/data/${collection}?filter=${encodeURIComponent(JSON.stringify(filter))}&limit=${limit}`, { bearer: tenant.bearer });
  const ids = (res: { body: { records: { id: string }[] } }) => res.body.records.map((r) => r.id).sort();

  it("gives each tenant its own records and its own total under one compiled list", async () => {
    const t = await startBackend();
    const [a, b, c] = [await signupTenant(t), await signupTenant(t), await signupTenant(t)];
    const made = { a: [] as string[], b: [] as string[] };
    for (let i = 0; i < 3; i++) made.a.push((await create(t, a, "items", { open: true, i })).body.record.id);
    for (let i = 0; i < 5; i++) made.b.push((await create(t, b, "items", { open: true, i })).body.record.id);
    await create(t, b, "items", { open: false });
    for (const limit of [2, 50]) {
      // limit 2 counts the matches (the page is full); limit 50 reads them all.
      const [ra, rb, rc] = [await list(t, a, { open: true }, limit), await list(t, b, { open: true }, limit), await list(t, c, { open: true }, limit)];
      expect([ra.body.total, rb.body.total, rc.body.total]).toEqual([3, 5, 0]);
      for (const id of ids(ra)) expect(made.a).toContain(id);
      for (const id of ids(rb)) expect(made.b).toContain(id);
      expect(rc.body.records).toEqual([]);
    }
    expect(ids(await list(t, a, { open: true }, 50))).toEqual([...made.a].sort());
    expect(ids(await list(t, b, { open: true }, 50))).toEqual([...made.b].sort());
  });

  it("compiles again when the collection's declared indexes change, and keeps answering the same", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    for (let i = 0; i < 4; i++) await create(t, tenant, "items", { status: i % 2 ? "open" : "done", n: i });
    const before = await list(t, tenant, { status: "open" }, 1);
    expect(before.body.total).toBe(2);
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { items: { indexed: ["status"] } } } });
    expect((await t.backend.core.db.records.explainList({ appId: t.app.id, tenantId: tenant.id, collection: "items", indexed: new Set(["status"]) }, parseList('{"status":"open"}', undefined).conditions, parseList(undefined, undefined).sort)).join(" ")).toMatch(/USING INDEX/);
    const statement = Object.getPrototypeOf(t.backend.core.sqlite.prepare("SELECT 1")) as Record<"all", (...args: unknown[]) => unknown>;
    const { all } = statement;
    const served: string[] = [];
    statement.all = function (this: { source: string }, ...args: unknown[]) {
      if (this.source.startsWith("SELECT seq, id, data")) served.push(this.source);
      return all.apply(this, args);
    };
    let after;
    try {
      after = await list(t, tenant, { status: "open" }, 1);
    } finally {
      statement.all = all;
    }
    // The page ran the statement written for the index (its path literal), not the one compiled before.
    expect(served).toHaveLength(1);
    expect(served[0]).toContain(`json_extract(data, '$."status"')`);
    expect(after.body).toEqual(before.body);
    await create(t, tenant, "items", { status: "open", n: 9 });
    expect((await list(t, tenant, { status: "open" }, 1)).body.total).toBe(3);
  });

  it("keeps answering right past its bound of compiled lists", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    await create(t, tenant, "items", { n: 7 });
    // More distinct filters than the cache holds (500), then the first ones again.
    for (let n = 0; n < 520; n++) expect((await list(t, tenant, { n })).body.total).toBe(n === 7 ? 1 : 0);
    expect((await list(t, tenant, { n: 7 })).body.records.map((r: { data: unknown }) => r.data)).toEqual([{ n: 7 }]);
  });
});

describe("parsed filters under the parse cache", () => {
  it("hands out one frozen object per text, and parses an invalid text every time", () => {
    const first = parseList('{"status":"open"}', '{"n":1}');
    expect(parseList('{"status":"open"}', '{"n":1}')).toBe(first);
    expect(parseList('{"status":"open"}', undefined)).not.toBe(first);
    expect(Object.isFrozen(first.conditions) && Object.isFrozen(first.conditions[0]) && Object.isFrozen(first.sort[0]!.target)).toBe(true);
    expect(parseList(undefined, undefined)).toBe(parseList("", ""));
    for (let i = 0; i < 2; i++) expect(() => parseList('{"status":', undefined)).toThrow(/Invalid filter/);
    expect(() => parseList("{}", "[1]")).toThrow(/Invalid sort/);
  });

  it("lets the least recently used texts go past its bound", () => {
    const kept = parseList('{"kept":1}', undefined);
    const dropped = parseList('{"dropped":1}', undefined);
    for (let i = 0; i < PARSED_LIST_CACHE_SIZE; i++) {
      parseList(`{"n":${i}}`, undefined);
      if (i % 100 === 0) expect(parseList('{"kept":1}', undefined)).toBe(kept);
    }
    expect(parseList('{"kept":1}', undefined)).toBe(kept);
    const again = parseList('{"dropped":1}', undefined);
    expect(again).not.toBe(dropped);
    expect(again).toEqual(dropped);
  });
});

/** Access tokens under one Ed25519 key of "app_x", as the server's signing keys would hand out. */
function testTokens(maxCached?: number, appId = "app_x") {
  const { publicKey, privateKey } = generateKeyPairSync("ed25519");
  const kid = "key_aaaaaaaaaaaaaaaa";
  const tokens = createAccessTokens(Buffer.alloc(32, 7), (k) => (k === kid ? { appId, publicKey, verifiesUntil: null } : undefined), maxCached);
  const signer = { kid, header: tokenHeader(kid), privateKey };
  return { tokens, issue: (claims: Parameters<typeof tokens.issue>[0], now: number) => tokens.issue(claims, now, signer) };
}

describe("verified access tokens under the token cache", () => {
  const claims = (n: number) => ({ sub: `tnt_${n}`, app: "app_x", sid: `sess_${n}`, pid: null });

  it("stays within its bound by letting the earliest go, and every token still verifies", () => {
    const { tokens, issue } = testTokens(3);
    const now = Date.UTC(2026, 0, 1);
    const issued = [1, 2, 3, 4, 5].map((n) => issue(claims(n), now).token);
    for (const [i, token] of issued.entries()) {
      const result = tokens.verify(token, now);
      expect(result.ok && result.claims.sub).toBe(`tnt_${i + 1}`);
      // Full, it gives up one token per new one rather than everything it held.
      expect(tokens.cached).toBe(Math.min(i + 1, 3));
    }
    for (const [i, token] of issued.entries()) expect(tokens.verify(token, now).ok, `token ${i + 1}`).toBe(true);
    expect(tokens.cached).toBe(3);
  });

  it("a known signature under another payload is verified in full, and refused", () => {
    const { tokens, issue } = testTokens(3);
    const now = Date.UTC(2026, 0, 1);
    const { token } = issue(claims(1), now);
    expect(tokens.verify(token, now).ok).toBe(true);
    expect(tokens.known(token)).toBe(true);
    const [h, p, sig] = token.split(".");
    const payload = JSON.parse(Buffer.from(p!, "base64url").toString("utf8"));
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...payload, sub: "tnt_2" })).toString("base64url")}.${sig}`;
    expect(tokens.known(forged)).toBe(false);
    expect(tokens.verify(forged, now)).toEqual({ ok: false, reason: "signature" });
    // The genuine token is still remembered and verifies.
    expect(tokens.verify(token, now)).toMatchObject({ ok: true, claims: { sub: "tnt_1" } });
    expect(tokens.cached).toBe(1);
  });

  it("a cached token still expires, and a forged one is never cached", () => {
    const { tokens, issue } = testTokens(3);
    const now = Date.UTC(2026, 0, 1);
    const { token } = issue(claims(1), now);
    expect(tokens.verify(token, now).ok).toBe(true);
    expect(tokens.verify(token, now + ACCESS_TOKEN_TTL_SECONDS * 1000)).toEqual({ ok: false, reason: "expired" });
    expect(tokens.cached).toBe(0);
    const [h, p] = token.split(".");
    expect(tokens.verify(`${h}.${p}.${"A".repeat(43)}`, now)).toEqual({ ok: false, reason: "signature" });
    expect(tokens.cached).toBe(0);
  });
});

describe("token JSON written by hand", () => {
  const now = Date.UTC(2026, 0, 1);
  const payloadOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8")) as unknown;

  it("an access token carries exactly its claims, a family owner or null, strings escaped", () => {
    const iat = now / 1000;
    for (const claims of [
      { sub: "tnt_1", app: "app_x", sid: "ses_1", pid: null },
      { sub: "tnt_2", app: "app_x", sid: "ses_2", pid: "tnt_owner" },
      { sub: 'tnt_"quoted\\', app: "app_\u2028", sid: "ses_\n", pid: "tnt_é" },
    ]) {
      // A key verifies its own app's tokens only.
      const { tokens, issue } = testTokens(undefined, claims.app);
      const { token, exp } = issue(claims, now);
      const full = { iss: "tenantd", ...claims, iat, exp: iat + ACCESS_TOKEN_TTL_SECONDS };
      expect(exp).toBe(full.exp);
      expect(payloadOf(token)).toEqual(full);
      expect(Object.keys(payloadOf(token) as object)).toEqual(["iss", "sub", "app", "sid", "pid", "iat", "exp"]);
      expect(tokens.verify(token, now)).toEqual({ ok: true, claims: full });
    }
  });

  it("the refresh reply is the JSON of its token pair, a refresh token with JSON's special characters escaped", () => {
    const pair = { accessToken: "eyJh.eyJp.c2ln-_", refreshToken: "rt_AbC-_09", expiresIn: 900, refreshExpiresIn: 7_776_000 };
    expect(tokenPairJson(pair)).toBe(JSON.stringify(pair));
    const odd = { ...pair, refreshToken: 'rt_"\\\n\u2028' };
    expect(JSON.parse(tokenPairJson(odd))).toEqual(odd);
  });

  it("the introspection answer is its JSON, active or not, strings JSON escapes escaped", () => {
    const active = { active: true, tenantId: "tnt_abc", appId: "app_x", exp: "2026-01-01T00:15:00.000Z", parentTenantId: "tnt_owner" };
    const inactive = { active: false, tenantId: null, appId: null, exp: null, parentTenantId: null };
    for (const x of [active, inactive, { ...active, parentTenantId: null }]) expect(introspectionJson(x)).toBe(JSON.stringify(x));
    const odd = { ...active, tenantId: 'tnt_"\\\n\u2028é', appId: "app x/y" };
    expect(JSON.parse(introspectionJson(odd))).toEqual(odd);
  });
});

describe("apps under the app cache", () => {
  it("a publishable key changed by another process (the CLI) applies within FRESHNESS_MS", async () => {
    const t = await startBackend();
    const introspect = (key: string) => t.request("POST", "/api/v1/auth/introspect", { key, body: {} });
    const old = t.app.publishableKey;
    expect((await introspect(old)).status).toBe(200);
    otherProcess(t, (db) => db.prepare("UPDATE apps SET publishable_key = ? WHERE id = ?").run("pk_changed_elsewhere", t.app.id));
    await new Promise((r) => setTimeout(r, FRESHNESS_MS + 20));
    expect((await introspect("pk_changed_elsewhere")).status).toBe(200);
    expect((await introspect(old)).status).toBe(401);
  });
});
