import Database from "better-sqlite3";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { PASSWORD, refresh } from "./_auth.ts";
import { SESSION_FRESHNESS_MS, sessionStates } from "../src/db/sqlite/session-state-cache.ts";
import { storeRows } from "./_store.ts";
import { tokenFromOutbox } from "./_email.ts";
import { FRESHNESS_MS } from "../src/db/shared.ts";

/**
 * The tenant guard keeps session states in memory: on SQLite following the file's
 * data_version (src/db/sqlite/session-state-cache.ts), on PostgreSQL following the change feed
 * (src/db/postgres/changes.ts). Every way a session ends must refuse its access token on the
 * very next request, although the token's session was cached as live a moment before. A change
 * made by another process shows within 0.1 s: on SQLite 0.1 s of the server's clock, on
 * PostgreSQL 0.1 s of real time (the announcement's way back from the database).
 */

/** Another process's change: the server's clock moves 0.1 s; on PostgreSQL real time may too, up to 0.1 s, until `seen` holds. */
async function afterOtherProcess(t: TestBackend, seen: () => Promise<boolean>) {
  t.clock.advance(FRESHNESS_MS);
  await afterPlainSql(t, seen);
}

/**
 * A write in plain SQL on tenantd's own database handle, past its repositories: on SQLite a
 * TEMP trigger drops the entry at once; on PostgreSQL it is announced like another process's
 * write, so it shows within 0.1 s of real time.
 */
async function afterPlainSql(t: TestBackend, seen: () => Promise<boolean>) {
  if (t.backend.core.engine === "sqlite") return;
  const until = Date.now() + 100;
  while (Date.now() < until && !(await seen())) await new Promise((resolve) => setTimeout(resolve, 5));
}

const me = (t: TestBackend, tenant: TestTenant) => t.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer });
const introspect = (t: TestBackend, tenant: TestTenant) => t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: tenant.bearer, body: {} });

/** The session is live and cached: `me`, a data read and introspection all accept the token. */
async function cachedLive(t: TestBackend, tenant: TestTenant) {
  expect((await me(t, tenant)).status).toBe(200);
  expect((await t.request("GET", "/api/v1/data/notes", { bearer: tenant.bearer })).status).toBe(200);
  expect((await introspect(t, tenant)).body.active).toBe(true);
  const sid = JSON.parse(Buffer.from(tenant.accessToken.split(".")[1]!, "base64url").toString("utf8")).sid as string;
  if (t.backend.core.engine === "sqlite") expect(sessionStates(t.backend.core.sqlite).size).toBeGreaterThan(0);
  return sid;
}

async function refused(t: TestBackend, tenant: TestTenant) {
  expectError(await me(t, tenant), 401, "session_ended");
  expectError(await t.request("GET", "/api/v1/data/notes", { bearer: tenant.bearer }), 401, "session_ended");
  expect((await introspect(t, tenant)).body.active).toBe(false);
}

describe("session state cache: revocation stays instant", () => {
  it("logout", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    await cachedLive(t, tenant);
    expect((await t.request("POST", "/api/v1/auth/logout", { bearer: tenant.bearer, body: {} })).status).toBeLessThan(300);
    await refused(t, tenant);
  });

  it("password reset ends every session of the tenant", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "reset@example.com" });
    const second = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "reset@example.com", password: PASSWORD } });
    const other = { ...tenant, accessToken: second.body.accessToken, bearer: { ...tenant.bearer, accessToken: second.body.accessToken } };
    await cachedLive(t, tenant);
    await cachedLive(t, other);
    const secret = { "x-service-secret": await t.backend.admin.rotateAppSecretKey(t.app.id) };
    const requested = await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, headers: secret, body: { email: "reset@example.com", sendEmail: false } });
    const done = await t.request("POST", "/api/v1/auth/reset-password", { key: t.app.publishableKey, body: { token: requested.body.resetToken, password: "a brand new password" } });
    expect(done.body).toEqual({ ok: true });
    await refused(t, tenant);
    await refused(t, other);
  });

  it("account deletion by the tenant, and by the developer (the session rows go by cascade)", async () => {
    const t = await startBackend();
    const self = await signupTenant(t);
    await cachedLive(t, self);
    expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: self.bearer, body: {} })).status).toBe(200);
    await refused(t, self);

    const victim = await signupTenant(t);
    await cachedLive(t, victim);
    const developer = await developerSession(t);
    expect((await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/tenants/${victim.id}`, { developer })).status).toBeLessThan(300);
    await refused(t, victim);
  });

  it("re-use of a rotated refresh token ends the session its access tokens belong to", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    await cachedLive(t, tenant);
    expect((await refresh(t, tenant.refreshToken)).status).toBe(200);
    await cachedLive(t, tenant);
    t.clock.advance(60_000);
    expect((await refresh(t, tenant.refreshToken)).status).toBe(401);
    await refused(t, tenant);
  });

  it("another process ending the session (the CLI, a second server) is seen within 0.1 s", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const sid = await cachedLive(t, tenant);
    // Another connection: a second SQLite handle on the file, or PostgreSQL's own connection.
    if (t.backend.core.engine === "sqlite") {
      const other = new Database(join(t.dataDir, "tenantd.db"));
      try {
        other.prepare("UPDATE sessions SET ended_at = ?, end_reason = 'logout' WHERE id = ?").run(t.clock(), sid);
      } finally {
        other.close();
      }
    } else {
      await storeRows(t.backend).run("UPDATE sessions SET ended_at = ?, end_reason = 'logout' WHERE id = ?", t.clock(), sid);
    }
    expect(SESSION_FRESHNESS_MS).toBe(FRESHNESS_MS);
    await afterOtherProcess(t, async () => (await me(t, tenant)).status === 401);
    await refused(t, tenant);
  });

  it("a session extended by refresh is read again; expiry needs no write", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const sid = await cachedLive(t, tenant);
    // Written without any tenantd code (on SQLite, on tenantd's own connection: the trigger
    // still drops the cached entry).
    await storeRows(t.backend).run("UPDATE sessions SET expires_at = ? WHERE id = ?", t.clock() + 1000, sid);
    if (t.backend.core.engine === "sqlite") expect(sessionStates(t.backend.core.sqlite).get(sid, t.clock())?.expiresAt).toBe(t.clock() + 1000);
    expect((await me(t, tenant)).status).toBe(200);
    t.clock.advance(2000);
    await afterPlainSql(t, async () => (await me(t, tenant)).status === 401);
    expectError(await me(t, tenant), 401, "session_ended");
  });
});

describe("tenant row cache: what me and introspection show follows every change", () => {
  // `me` and introspection read the tenant row from memory (src/db/sqlite/row-cache.ts, src/db/postgres/row-cache.ts).
  const shown = async (t: TestBackend, tenant: TestTenant) => {
    const [m, i] = [await me(t, tenant), await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: tenant.bearer, body: { include: ["tenant"] } })];
    return { verifiedAt: m.body.tenant?.emailVerifiedAt, introspected: i.body.tenant?.emailVerifiedAt, parent: i.body.parentTenantId, active: i.body.active };
  };

  it("an email verified through the API, and any UPDATE on tenantd's own connection, show on the next request", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t, { email: "cached@example.com" });
    const parent = await signupTenant(t);
    expect(await shown(t, tenant)).toEqual({ verifiedAt: null, introspected: null, parent: null, active: true });
    expect((await t.request("POST", "/api/v1/auth/verify-email", { key: t.app.publishableKey, body: { token: await tokenFromOutbox(t, "cached@example.com", "verify") } })).status).toBe(200);
    const at = new Date(t.clock()).toISOString();
    expect(await shown(t, tenant)).toEqual({ verifiedAt: at, introspected: at, parent: null, active: true });
    // Written without any tenantd code path (on SQLite, tenantd's own connection: the trigger drops the entry).
    await storeRows(t.backend).run("UPDATE tenants SET email_verified_at = NULL, parent_tenant_id = ? WHERE id = ?", parent.id, tenant.id);
    await afterPlainSql(t, async () => (await shown(t, tenant)).parent === parent.id);
    expect(await shown(t, tenant)).toEqual({ verifiedAt: null, introspected: null, parent: parent.id, active: true });
  });

  it("another process's change shows within 0.1 s, its deletion of the tenant too", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    expect((await shown(t, tenant)).verifiedAt).toBeNull();
    const other = (sql: string, ...args: unknown[]) =>
      t.backend.core.engine === "sqlite"
        ? (() => {
            const db = new Database(join(t.dataDir, "tenantd.db"));
            try {
              db.prepare(sql).run(...args);
            } finally {
              db.close();
            }
          })()
        : storeRows(t.backend).run(sql, ...args);
    const verifiedAt = new Date(t.clock()).toISOString();
    await other("UPDATE tenants SET email_verified_at = ? WHERE id = ?", t.clock(), tenant.id);
    await afterOtherProcess(t, async () => (await shown(t, tenant)).verifiedAt !== null);
    expect((await shown(t, tenant)).verifiedAt).toBe(verifiedAt);
    await other("DELETE FROM tenants WHERE id = ?", tenant.id);
    await afterOtherProcess(t, async () => (await me(t, tenant)).status === 401);
    expectError(await me(t, tenant), 401, "session_ended");
    expect((await introspect(t, tenant)).body.active).toBe(false);
  });

  it("a row remembered for one app is not another app's", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    expect((await me(t, tenant)).status).toBe(200);
    const tenants = t.backend.core.db.tenants;
    expect((await tenants.findById(t.app.id, tenant.id, t.clock()))?.id).toBe(tenant.id);
    expect(await tenants.findById("app_someoneelse0000", tenant.id, t.clock())).toBeUndefined();
    expect(await tenants.findById("app_someoneelse0000", tenant.id)).toBeUndefined();
  });
});
