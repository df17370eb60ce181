import { describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { join } from "node:path";
import { createTenantBackend, ConfigError } from "../src/index.ts";
import postgres from "postgres";
import { MIGRATIONS } from "../src/db/sqlite/migrations.ts";
import { PG_MIGRATIONS } from "../src/db/postgres/migrations.ts";
import { developerSession, expectError, serveHttp, signupTenant, startBackend, tempDir, TEST_ARGON2 } from "./_helpers.ts";
import { TEST_ENGINE } from "./_engines.ts";
import { testStoreConfig } from "./_postgres.ts";
import { storeRows } from "./_store.ts";

/** The schema versions this engine's migrations write, and a store whose schema is newer. */
const MIGRATED = TEST_ENGINE === "postgres" ? PG_MIGRATIONS.map((m) => m.version) : MIGRATIONS.map((m) => m.version);
async function writeFutureSchemaVersion(dataDir: string) {
  const store = await testStoreConfig(dataDir);
  if (store.config.database) {
    const sql = postgres(store.config.database.url, { max: 1, onnotice: () => {} });
    await sql`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'future', 0)`;
    await sql.end();
  } else {
    const db = new Database(join(dataDir, "tenantd.db"));
    db.exec("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
    db.prepare("INSERT INTO schema_migrations VALUES (999, 'future', 0)").run();
    db.close();
  }
  return store;
}

describe("migrations", () => {
  it("create every table on a fresh database and record each version", async () => {
    const t = await startBackend();
    const rows = storeRows(t.backend);
    expect(await rows.column("SELECT version FROM schema_migrations ORDER BY version")).toEqual(MIGRATED);
    expect((await rows.tables()).map((table) => table.name)).toEqual(expect.arrayContaining(["apps", "developers", "tenants", "sessions"]));
    if (rows.engine === "sqlite") {
      expect(t.backend.core.sqlite.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(t.backend.core.sqlite.pragma("foreign_keys", { simple: true })).toBe(1);
    } else {
      // PostgreSQL always logs ahead and always enforces foreign keys: the schema must declare them.
      expect(await rows.value("SELECT COUNT(*) FROM information_schema.table_constraints WHERE constraint_type = 'FOREIGN KEY' AND table_name = 'sessions'")).toBeGreaterThan(0);
    }
  });

  it("reopen an existing database without re-running migrations or losing data", async () => {
    const dataDir = tempDir();
    const { config: store, drop } = await testStoreConfig(dataDir);
    try {
      const first = await createTenantBackend({ dataDir, logger: "silent", argon2: TEST_ARGON2, ...store });
      const appId = first.defaultApp!.id;
      await first.close();
      const second = await createTenantBackend({ dataDir, logger: "silent", argon2: TEST_ARGON2, ...store });
      try {
        expect(second.defaultApp).toBeUndefined();
        expect((await second.admin.listApps()).map((a) => a.id)).toEqual([appId]);
        const rows = await storeRows(second).value("SELECT COUNT(*) FROM schema_migrations");
        expect(rows).toBe(MIGRATED.length);
      } finally {
        await second.close();
      }
    } finally {
      await drop?.();
    }
  });

  it("refuse a database written by a newer tenantd", async () => {
    const dataDir = tempDir();
    const { config: store, drop } = await writeFutureSchemaVersion(dataDir);
    try {
      await expect(createTenantBackend({ dataDir, logger: "silent", ...store })).rejects.toThrow(/newer than this tenantd knows/);
    } finally {
      await drop?.();
    }
  });
});

describe("configuration", () => {
  it.each([
    [{ maxJsonBytes: -1 }, "maxJsonBytes"],
    [{ argon2: { memoryCost: "big" } }, "argon2.memoryCost"],
    [{ publicUrl: "not a url" }, "publicUrl"],
    [{ secretKey: "short" }, "secretKey"],
    [{ unknownOption: true }, "unknownOption"],
    [{ email: { transport: "smtp" } }, "email.smtp"],
  ])("fail at startup naming the option: %j", async (config, name) => {
    const err = await createTenantBackend({ dataDir: tempDir(), logger: "silent", ...(config as object) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(name);
  });
});

describe("email from the environment", () => {
  it("uses SMTP when TENANTD_SMTP_HOST is set and no email option is given", async () => {
    const { resolveConfig } = await import("../src/index.ts");
    const base = { dataDir: tempDir(), logger: "silent" as const };
    expect(resolveConfig(base, {}).email).toMatchObject({ transport: "outbox" });
    expect(resolveConfig(base, { TENANTD_SMTP_HOST: "mail.example.com", TENANTD_SMTP_USER: "u", TENANTD_SMTP_PASS: "p", TENANTD_EMAIL_FROM: "App <a@example.com>" }).email).toEqual({
      transport: "smtp",
      from: "App <a@example.com>",
      smtp: { host: "mail.example.com", port: 587, secure: false, user: "u", pass: "p" },
    });
    expect(resolveConfig(base, { TENANTD_SMTP_HOST: "mail.example.com", TENANTD_SMTP_PORT: "465" }).email.smtp).toMatchObject({ port: 465, secure: true });
    expect(() => resolveConfig(base, { TENANTD_SMTP_HOST: "mail.example.com", TENANTD_SMTP_PORT: "x" })).toThrow(/TENANTD_SMTP_PORT/);
    expect(resolveConfig({ ...base, email: { transport: "outbox" } }, { TENANTD_SMTP_HOST: "mail.example.com" }).email.transport).toBe("outbox");
  });
});

describe("app key", () => {
  it("is required, must be known, and names the app", async () => {
    const t = await startBackend();
    const body = { email: "a@example.com", password: "long enough" };
    expectError(await t.request("POST", "/api/v1/auth/signup", { body }), 401, "unauthorized");
    expectError(await t.request("POST", "/api/v1/auth/signup", { body, key: "pk_nope" }), 401, "unauthorized");
    const other = await t.backend.admin.createApp({ name: "other" });
    const inOther = await signupTenant(t, { key: other.publishableKey, appId: other.id, email: "a@example.com" });
    // The same email is a different tenant in each app.
    const inDefault = await signupTenant(t, { email: "a@example.com" });
    expect(inOther.id).not.toBe(inDefault.id);
    // A token of one app is refused under the other's id.
    expectError(await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: inOther.accessToken, appId: t.app.id } }), 401, "invalid_access_token");
  });
});

describe("credential mix-ups", () => {
  it("say what was sent wrong", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const noPrefix = await t.request("GET", "/api/v1/auth/me", { headers: { authorization: tenant.accessToken, "x-service-app": t.app.id } });
    expectError(noPrefix, 401, "unauthorized");
    expect(noPrefix.body.message).toContain("must read: Bearer");
    // The token is verified (and remembered) by now: the header's other spellings still read
    // the same, and text around a known token still makes the header malformed.
    const me = (authorization: string) => t.request("GET", "/api/v1/auth/me", { headers: { authorization, "x-service-app": t.app.id } });
    for (const spelling of [`Bearer ${tenant.accessToken}`, `bearer ${tenant.accessToken}`, `BEARER\t${tenant.accessToken}`, `Bearer   ${tenant.accessToken}`]) {
      expect((await me(spelling)).status, spelling.slice(0, 10)).toBe(200);
    }
    for (const junk of [`Bearer ${tenant.accessToken} x`, `Bearer x ${tenant.accessToken}`, `Bearer ${tenant.accessToken}\u00a0x`, `Bearer${tenant.accessToken}`]) {
      expectError(await me(junk), 401, "unauthorized");
    }
    expectError(await me(`Bearer ${tenant.accessToken}x`), 401, "invalid_access_token");
    const keyAsApp = await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: tenant.accessToken, appId: t.app.publishableKey } });
    expect(keyAsApp.body.message).toContain("not the publishable key");
    const developer = await developerSession(t);
    const devOnTenant = await t.request("GET", "/api/v1/auth/me", { bearer: { accessToken: developer, appId: t.app.id } });
    expectError(devOnTenant, 401, "invalid_access_token");
    expect(devOnTenant.body.message).toContain("developer session token");
    const secretAsKey = await t.request("POST", "/api/v1/auth/login", { key: await t.backend.admin.rotateAppSecretKey(t.app.id), body: { email: "a@example.com", password: "long enough" } });
    expect(secretAsKey.body.message).toContain("x-service-secret");
    const tenantOnAdmin = await t.request("GET", "/api/v1/admin/apps", { developer: tenant.accessToken });
    expectError(tenantOnAdmin, 401, "unauthorized");
    expect(tenantOnAdmin.body.message).toContain("tenant access token");
  });
});

/** A JSON POST whose body arrives as the stream's chunks (chunked transfer encoding). */
const postStream = (url: string, key: string, body: ReadableStream<Uint8Array>) =>
  fetch(url, { method: "POST", headers: { "x-service-key": key, "content-type": "application/json" }, body, duplex: "half" } as RequestInit);

describe("request plumbing", () => {
  it("answers unknown routes and wrong methods with JSON 404 and 405", async () => {
    const t = await startBackend();
    expectError(await t.request("GET", "/api/v1/nothing-here"), 404, "not_found");
    const malformed = await t.request("GET", "/api/v1/data/notes/%ZZ");
    expectError(malformed, 400, "invalid_request");
    expect(malformed.body.message).toContain("percent-encoding");
    const res = await t.request("DELETE", "/api/v1/auth/login");
    expectError(res, 405, "method_not_allowed");
    expect(res.headers.get("allow")).toBe("POST");
  });

  it("refuses malformed JSON, other content types and oversized bodies", async () => {
    const t = await startBackend({ maxJsonBytes: 1024 });
    const key = t.app.publishableKey;
    expectError(await t.request("POST", "/api/v1/auth/login", { key, raw: "{nope", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    expectError(await t.request("POST", "/api/v1/auth/login", { key, raw: "email=a", headers: { "content-type": "application/x-www-form-urlencoded" } }), 415, "unsupported_media_type");
    expectError(await t.request("POST", "/api/v1/auth/login", { key, body: { email: "a@b.co", password: "x".repeat(2000) } }), 413, "payload_too_large");
    expectError(await t.request("POST", "/api/v1/auth/login", { key, body: ["not", "an", "object"] }), 400, "invalid_request");
    // An endpoint whose fields are all optional still refuses a body that is not an object.
    const tenant = await signupTenant(t);
    for (const body of [[], "text", 42, null]) {
      expectError(await t.request("POST", "/api/v1/auth/resend-verification", { bearer: tenant.bearer, body }), 400, "invalid_request");
    }
  });

  it.each([
    ["POST", "/api/v1/auth/refresh", {}, "body.refreshToken is required."],
    ["POST", "/api/v1/auth/login", { email: "a@example.com", password: 12 }, "body.password must be a string (got 12)."],
    ["POST", "/api/v1/auth/introspect", { include: ["everything"] }, 'body.include.0: must be "subscription" or "tenant"'],
    // A misspelt optional field is named before the required field it hides.
    ["POST", "/api/v1/auth/signup", { email: "a@example.com", password: "long enough", invite_token: "inv_x" }, "body.invite_token is not a known field: check its spelling (known: email, password, locale, inviteToken, sendEmail)."],
    ["POST", "/api/v1/auth/refresh", { refresh_token: "rt_x" }, "body.refresh_token is not a known field: check its spelling (known: refreshToken)."],
  ])("says which field is wrong and how: %s %s", async (method, path, body, message) => {
    const t = await startBackend();
    const res = await t.request(method, path, { key: t.app.publishableKey, body });
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toBe(message);
  });

  it("counts an oversized chunked body while streaming, over real HTTP", async () => {
    const t = await startBackend({ maxJsonBytes: 1024 });
    const { url } = await serveHttp(t.backend);
    const chunks = new ReadableStream({
      start(c) {
        for (let i = 0; i < 10; i++) c.enqueue(new TextEncoder().encode(`{"pad":"${"x".repeat(500)}"}`));
        c.close();
      },
    });
    const res = await postStream(`${url}/api/v1/auth/login`, t.app.publishableKey, chunks);
    expect(res.status).toBe(413);
    // The rest of the body is dropped (up to a bound), so the connection stays usable
    // (test/security-bodies.test.ts follows it on a raw connection).
    expect(res.headers.get("connection")).toBe("keep-alive");
    expect(await res.json()).toMatchObject({ error: "payload_too_large" });
  });

  it("reads a JSON body that arrives in pieces over real HTTP, a character split between two of them", async () => {
    const t = await startBackend();
    const { url } = await serveHttp(t.backend);
    const password = "pässwörd ünïcode ✓";
    const bytes = new TextEncoder().encode(JSON.stringify({ email: "pieces@example.com", password }));
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "ä"
    const pieces = new ReadableStream({
      async start(c) {
        c.enqueue(bytes.slice(0, cut));
        await new Promise((resolve) => setTimeout(resolve, 20));
        c.enqueue(bytes.slice(cut));
        c.close();
      },
    });
    const signup = await postStream(`${url}/api/v1/auth/signup`, t.app.publishableKey, pieces);
    expect(signup.status).toBe(201);
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "pieces@example.com", password } });
    expect(login.status).toBe(200);
  });

  it("hides internals of unexpected failures", async () => {
    const t = await startBackend();
    t.backend.core.hooks.on("tenant.created", () => {
      throw new Error("SELECT secret FROM internals");
    });
    const res = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "x@example.com", password: "long enough" } });
    expectError(res, 500, "internal_error");
    expect(res.text).not.toContain("SELECT");
  });

  it("answers HEAD like GET, without a body, over real HTTP", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const { url } = await serveHttp(t.backend);
    const headers = { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id };
    const res = await fetch(`${url}/api/v1/auth/me`, { method: "HEAD", headers });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(await res.text()).toBe("");
    const refused = await fetch(`${url}/api/v1/auth/me`, { method: "HEAD" });
    expect(refused.status).toBe(401);
  });

  it("answers oversized headers with JSON 431 over real HTTP", async () => {
    const t = await startBackend();
    const { url } = await serveHttp(t.backend);
    const res = await fetch(`${url}/api/v1/auth/me`, { headers: { "x-big": "a".repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(await res.json()).toMatchObject({ error: "headers_too_large" });
  });
});

describe("CORS", () => {
  it("allows a preflight only from an origin some app lists, and refuses a request from an origin its app does not list", async () => {
    const t = await startBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example.com"] } });
    const pre = await t.request("OPTIONS", "/api/v1/auth/login", { headers: { origin: "https://app.example.com", "access-control-request-method": "POST" } });
    expect(pre.status).toBe(204);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(pre.headers.get("access-control-allow-headers")).toContain("x-service-key");

    expectError(await t.request("OPTIONS", "/api/v1/auth/login", { headers: { origin: "https://evil.example", "access-control-request-method": "POST" } }), 403, "origin_not_allowed");

    const ok = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, headers: { origin: "https://app.example.com" }, body: { email: "c@example.com", password: "long enough" } });
    expect(ok.status).toBe(201);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");

    const refused = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, headers: { origin: "https://evil.example" }, body: { email: "d@example.com", password: "long enough" } });
    expectError(refused, 403, "origin_not_allowed");
    expect(await t.backend.core.db.tenants.findByEmail(t.app.id, "d@example.com")).toBeUndefined();
  });
});

describe("developer admin", () => {
  it("signs in and out; a session token is stored hashed", async () => {
    const t = await startBackend();
    const token = await developerSession(t, "owner@example.com");
    const me = await t.request("GET", "/api/v1/developer/me", { developer: token });
    expect(me.body.developer.email).toBe("owner@example.com");
    const stored = await storeRows(t.backend).column<string>("SELECT token_hash FROM developer_sessions");
    expect(stored).not.toContain(token);
    expect((await t.request("POST", "/api/v1/developer/logout", { developer: token })).status).toBe(204);
    expectError(await t.request("GET", "/api/v1/developer/me", { developer: token }), 401, "unauthorized");
    expectError(await t.request("POST", "/api/v1/developer/login", { body: { email: "owner@example.com", password: "wrong password" } }), 401, "invalid_credentials");
    expectError(await t.request("POST", "/api/v1/developer/login", { body: { email: "nobody@example.com", password: "wrong password" } }), 401, "invalid_credentials");
  });

  it("first developer adopts the default app; apps are created, updated, listed and deleted", async () => {
    const t = await startBackend();
    const token = await developerSession(t);
    const list = await t.request("GET", "/api/v1/admin/apps", { developer: token });
    expect(list.body.apps.map((a: { id: string }) => a.id)).toEqual([t.app.id]);

    const created = await t.request("POST", "/api/v1/admin/apps", { developer: token, body: { name: "shop", settings: { signupMode: "closed" } } });
    expect(created.status).toBe(201);
    const id = created.body.app.id;
    expect(created.body.app.publishableKey).toMatch(/^pk_/);

    const patched = await t.request("PATCH", `/api/v1/admin/apps/${id}`, {
      developer: token,
      body: { settings: { corsOrigins: ["https://shop.example"], billing: { stripeSecretKey: "sk_test_123" } } },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.app.settings.signupMode).toBe("closed");
    expect(patched.body.app.settings.billing.stripeSecretKey).toBe("[encrypted]");
    const raw = await storeRows(t.backend).value<string>("SELECT settings FROM apps WHERE id = ?", id);
    expect(raw).not.toContain("sk_test_123");

    const badMode = await t.request("PATCH", `/api/v1/admin/apps/${id}`, { developer: token, body: { settings: { signupMode: "sometimes" } } });
    expectError(badMode, 400, "invalid_request");
    expect(badMode.body.message).toBe('settings.signupMode must be one of "open", "invite_only", "closed" (got "sometimes").');
    expect((await t.request("PATCH", `/api/v1/admin/apps/${id}`, { developer: token, body: { nmae: "x" } })).body.message).toBe("body.nmae is not a known field: check its spelling (known: name, settings).");
    const typo = await t.request("PATCH", `/api/v1/admin/apps/${id}`, { developer: token, body: { settings: { corsOrigin: ["https://x.example"] } } });
    expect(typo.body.message).toBe("settings.corsOrigin is not a known field: check its spelling.");
    const notList = await t.request("PATCH", `/api/v1/admin/apps/${id}`, { developer: token, body: { settings: { corsOrigins: "https://x.example" } } });
    expect(notList.body.message).toBe('settings.corsOrigins must be an array (got "https://x.example").');
    expectError(await t.request("PATCH", `/api/v1/admin/apps/${id}`, { developer: token, body: { settings: { corsOrigins: ["https://x.example/path"] } } }), 400, "invalid_request");
    const deep = `{"settings":${'{"a":'.repeat(50_000)}1${"}".repeat(50_000)}}`;
    expectError(await t.request("PATCH", `/api/v1/admin/apps/${id}`, { developer: token, raw: deep, headers: { "content-type": "application/json" } }), 400, "invalid_request");
    const fields = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const tooMany = await t.request("PATCH", `/api/v1/admin/apps/${id}`, {
      developer: token,
      body: { settings: { collections: { a: { indexed: fields(20, "f") }, b: { unique: fields(13, "u") } } } },
    });
    expectError(tooMany, 400, "invalid_request");
    expect(tooMany.body.message).toContain("at most 32");
    const enough = await t.request("PATCH", `/api/v1/admin/apps/${id}`, { developer: token, body: { settings: { collections: { a: { indexed: fields(20, "f") }, b: { unique: fields(12, "u") } } } } });
    expect(enough.status).toBe(200);

    const rotated = await t.request("POST", `/api/v1/admin/apps/${id}/rotate-key`, { developer: token });
    expect(rotated.body.app.publishableKey).not.toBe(created.body.app.publishableKey);
    expectError(await t.request("POST", "/api/v1/auth/login", { key: created.body.app.publishableKey, body: { email: "a@b.co", password: "whatever1" } }), 401, "unauthorized");

    expect((await t.request("DELETE", `/api/v1/admin/apps/${id}`, { developer: token })).status).toBe(204);
    expectError(await t.request("GET", `/api/v1/admin/apps/${id}`, { developer: token }), 404, "not_found");
  });

  it("never shows or changes another developer's apps", async () => {
    const t = await startBackend();
    const alice = await developerSession(t, "alice@example.com");
    const bob = await developerSession(t, "bob@example.com");
    const own = await t.request("POST", "/api/v1/admin/apps", { developer: bob, body: { name: "bobs" } });
    const bobApp = own.body.app.id;
    expect((await t.request("GET", "/api/v1/admin/apps", { developer: alice })).body.apps.map((a: { id: string }) => a.id)).not.toContain(bobApp);
    for (const [method, path] of [
      ["GET", `/api/v1/admin/apps/${bobApp}`],
      ["PATCH", `/api/v1/admin/apps/${bobApp}`],
      ["DELETE", `/api/v1/admin/apps/${bobApp}`],
      ["GET", `/api/v1/admin/apps/${bobApp}/tenants`],
    ] as const) {
      expectError(await t.request(method, path, { developer: alice, body: method === "PATCH" ? { name: "mine" } : undefined }), 404, "not_found");
    }
    expect((await t.request("GET", `/api/v1/admin/apps/${bobApp}`, { developer: bob })).body.app.name).toBe("bobs");
  });

  it("reports real usage counts", async () => {
    const t = await startBackend();
    const token = await developerSession(t);
    await signupTenant(t);
    await signupTenant(t);
    const usage = await t.request("GET", "/api/v1/developer/usage", { developer: token });
    expect(usage.status).toBe(200);
    expect(usage.body.totals).toMatchObject({ apps: 1, tenants: 2 });
    expect(usage.body.apps[0]).toMatchObject({ appId: t.app.id, tenants: 2 });
  });

  it("lists and finds tenants of an own app", async () => {
    const t = await startBackend();
    const token = await developerSession(t);
    const a = await signupTenant(t, { email: "findme@example.com" });
    await signupTenant(t);
    const found = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants?email=findme`, { developer: token });
    expect(found.body).toMatchObject({ total: 1, limit: 50, offset: 0 });
    expect(found.body.tenants[0].id).toBe(a.id);
    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants?limit=5000`, { developer: token }), 400, "invalid_request");
    expect((await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants/${a.id}`, { developer: token })).body.tenant.email).toBe("findme@example.com");
    // The developer's tenant actions take an email as well as an id.
    expect((await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants/${encodeURIComponent("FindMe@example.com")}`, { developer: token })).body.tenant.id).toBe(a.id);
    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants/nobody%40example.com`, { developer: token }), 404, "not_found");
  });
});

describe("session housekeeping", () => {
  it("purges sessions that ended long ago, with their refresh tokens, and keeps live ones", async () => {
    const t = await startBackend();
    const gone = await signupTenant(t);
    const live = await signupTenant(t);
    await t.request("POST", "/api/v1/auth/logout", { bearer: gone.bearer, body: {} });
    const db = t.backend.core.db;
    expect(await db.sessions.purge(t.clock() + 1)).toBe(1);
    const left = await storeRows(t.backend).column("SELECT tenant_id FROM sessions");
    expect(left).toEqual([live.id]);
    const tokens = await storeRows(t.backend).value("SELECT COUNT(*) FROM refresh_tokens");
    expect(tokens).toBe(1);
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: live.bearer })).status).toBe(200);
  });
});
