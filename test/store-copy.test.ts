import { afterAll, describe, expect, it } from "vitest";
import Database from "better-sqlite3";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTenantBackend } from "../src/index.ts";
import { openDatabase } from "../src/db/sqlite/connection.ts";
import { createRepositories } from "../src/db/sqlite/index.ts";
import { COPY_TABLES, ENGINE_COLUMNS, NOT_COPIED } from "../src/db/copy/tables.ts";
import { postgresColumns } from "../src/db/copy/postgres.ts";
import { openSqliteCopyEnd, sqliteColumns } from "../src/db/copy/sqlite.ts";
import { copyTables } from "../src/db/copy/run.ts";
import type { CopyEnd } from "../src/db/copy/end.ts";
import { buildRequest, signupTenant, TEST_ARGON2, testClock, toReply, type TestTenant } from "./_helpers.ts";
import { runCli } from "./_cli.ts";
import { createTestDatabase } from "./_postgres.ts";
import { devSubscribe, familyBackend, tenantFrom } from "./family-fixtures.ts";
import { form, pathOf } from "./billing-fixtures.ts";
import { dataClient } from "./data-helpers.ts";
import { BOUNDARY, multipart, sample } from "./files-helpers.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";

// This file's stores outlive single tests (one populated store, copied there and back).
const dirs: string[] = [];
const dbs: { drop(): Promise<void> }[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), "tenantd-copy-"));
  dirs.push(d);
  return d;
};
afterAll(async () => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const db of dbs) await db.drop();
});
const database = async () => {
  const db = await createTestDatabase();
  dbs.push(db);
  return db.url;
};

const START = Date.UTC(2026, 0, 15, 12, 0, 0);
const NESTED = { title: "Grüße, 世界 🌍", "key with spaces": { deep: [1, 2.5, -0, 1e21, null, true, { "ünï": "quote \\ \" \n\t \u2028 \ud83d\ude00" }] }, n: 9007199254740991, order: { z: 1, a: 2 } };
const LARGE = { blob: "x".repeat(200_000), list: Array.from({ length: 500 }, (_, i) => ({ i, s: `item ${i} ✓` })) };

interface Populated {
  dataDir: string;
  appId: string;
  publishableKey: string;
  tenant: TestTenant;
  /** the tenant's records list as the API answered it before the move */
  listed: string;
  file: { url: string; bytes: Buffer };
}

/** A store with rows in every table, through the API wherever a route writes them; then closed (writes stopped). */
async function populate(): Promise<Populated> {
  const receiver = await startReceiver();
  const f = await familyBackend(2, { webhooks: { allowInsecure: true }, dataDir: dir() });
  const { b, t } = f;
  await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example.com"], invites: { defaultQuota: 5 }, collections: { notes: { indexed: ["rank"], unique: ["slug"] } } } });
  await configureWebhook(t, b.dev, receiver.url);
  const tenant = await b.tenant();
  // A family member: family invite, consume (family_invites, family_members, parent_tenant_id).
  const invite = await f.invite();
  tenantFrom(await f.consume(invite.token, `member-${Date.now()}@example.com`), t.app.id);
  // Invite tokens, a paid subscription through the development provider, usage counters.
  expect((await t.request("POST", "/api/v1/tenants/me/invite-tokens", { bearer: tenant.bearer, body: { note: "für Kim" } })).status).toBe(201);
  const pro = await b.plan({ name: "Pro", slug: "pro", entitlements: { api: 100 } });
  await devSubscribe(b, tenant, pro.id);
  expect((await b.tenantPost(tenant, "/usage/api/increment", { by: 3 })).status).toBe(200);
  // A reset email (email token + outbox); a refreshed session (a rotated refresh token).
  expect((await t.request("POST", "/api/v1/auth/request-password-reset", { key: t.app.publishableKey, body: { email: tenant.email } })).status).toBeLessThan(300);
  // Records: nested, unicode, large; a share link.
  const api = dataClient(t, tenant);
  const ids = await api.seed("notes", [{ slug: "a", rank: 2, ...NESTED }, { slug: "b", rank: 1, ...LARGE }, { slug: "c", rank: 3, text: "plain" }]);
  expect((await api.share("notes", ids[0]!, { expiresInSeconds: 3600 })).status).toBe(201);
  const listed = (await api.list("notes", { sort: { rank: 1 } })).text;
  // A file with its blob.
  const bytes = sample("png", 50_000);
  const up = await t.request("POST", "/api/v1/files/upload", {
    bearer: tenant.bearer,
    raw: multipart([{ name: "file", filename: "photo.png", type: "image/png", data: bytes }]),
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
  });
  expect(up.status, up.text).toBe(201);
  // OAuth: a started sign-in (state) and a linked account; Stripe bookkeeping rows.
  const linked = await signupTenant(t);
  const now = t.clock();
  await t.backend.core.db.oauth.createState({ stateHash: "s".repeat(64), appId: t.app.id, provider: "github", redirectUrl: "https://app.example.com/done", inviteToken: null, codeVerifier: t.backend.core.secrets.seal("verifier", t.app.id), browserHash: "b".repeat(64), createdAt: now, expiresAt: now + 600_000 });
  await t.backend.core.db.oauth.linkExisting({ appId: t.app.id, provider: "github", providerAccountId: "gh-42", email: linked.email, emailVerified: true, at: now }, linked.id);
  await t.backend.core.db.billing.saveStripeCustomer(t.app.id, tenant.id, "cus_123", now);
  await t.backend.core.db.billing.recordStripeEvent(t.app.id, "evt_1", "customer.subscription.updated", now);
  // MFA: TOTP with its recovery codes, a passkey, an MFA ticket waiting; a re-authenticated session.
  const mfa = t.backend.core.db.mfa;
  await mfa.startTotp({ tenantId: tenant.id, appId: t.app.id, secretSealed: t.backend.core.secrets.seal("key", `totp:${tenant.id}`), confirmedAt: null, lastStep: null, createdAt: now });
  await mfa.confirmTotp(t.app.id, tenant.id, 1, ["c".repeat(64), "d".repeat(64)], now);
  await mfa.insertPasskey({ id: "pk_1", appId: t.app.id, tenantId: tenant.id, credentialId: "cred-1", publicKey: "pub", counter: 3, transports: '["internal"]', name: "Laptop", createdAt: now, lastUsedAt: null });
  await mfa.createChallenge({ hash: "m".repeat(64), appId: t.app.id, tenantId: tenant.id, kind: "mfa_ticket", data: "{}", createdAt: now, expiresAt: now + 300_000 });
  // Sign-in methods of issue 42: an email sign-in waiting for its code, an anonymous tenant.
  await t.backend.admin.updateApp(t.app.id, { settings: { auth: { emailSignIn: true, anonymous: true } } });
  expect((await t.request("POST", "/api/v1/auth/email-sign-in", { key: t.app.publishableKey, body: { email: "code@example.com" } })).status).toBe(202);
  expect((await t.request("POST", "/api/v1/auth/anonymous", { key: t.app.publishableKey, body: {} })).status).toBe(201);
  // Refresh once: the old refresh token is kept as rotated.
  const refreshed = await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: tenant.refreshToken } });
  expect(refreshed.status, refreshed.text).toBe(200);
  tenant.accessToken = refreshed.body.accessToken;
  tenant.refreshToken = refreshed.body.refreshToken;
  tenant.bearer = { accessToken: tenant.accessToken, appId: t.app.id };
  // An organization (orgs) with a member who joined by an email invite (org_members, org_invites).
  await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
  const [orgOwner, orgMember] = [await signupTenant(t), await signupTenant(t)];
  const org = (await t.request("POST", "/api/v1/orgs", { bearer: orgOwner.bearer, body: { name: "Acme" } })).body.org;
  const orgInvite = await t.request("POST", `/api/v1/orgs/${org.id}/invites`, { bearer: orgOwner.bearer, body: { email: orgMember.email, role: "admin" } });
  expect((await t.request("POST", "/api/v1/orgs/invites/accept", { bearer: orgMember.bearer, body: { token: orgInvite.body.invite.token } })).status).toBe(200);
  // Its billing: 2 paid seats through the development provider, a usage counter, a Stripe customer (org_billing_*).
  const orgCheckout = await t.request("POST", `/api/v1/orgs/${org.id}/billing/checkout`, { bearer: orgOwner.bearer, body: { planId: pro.id, seats: 2, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" } });
  expect(orgCheckout.status, orgCheckout.text).toBe(200);
  expect((await t.request("POST", pathOf(orgCheckout.body.url), form({ action: "confirm" }))).status).toBe(303);
  expect((await t.request("POST", `/api/v1/orgs/${org.id}/billing/usage/api/increment`, { bearer: orgOwner.bearer, body: {} })).status).toBe(200);
  await t.backend.core.db.orgBilling.saveStripeCustomer(t.app.id, org.id, "cus_org", now);
  expect((await t.request("POST", `/api/v1/admin/apps/${t.app.id}/event-webhook-config/test`, { developer: b.dev })).status).toBeLessThan(300);
  await finishedDeliveries(t, b.dev, 1);
  // A tenant whose sign-in the developer turned off (tenant_sign_in_blocks).
  const blocked = await signupTenant(t, { email: "blocked@example.com" });
  expect((await t.request("POST", `/api/v1/admin/apps/${t.app.id}/tenants/${blocked.id}/sign-in/disable`, { developer: b.dev })).status).toBe(200);
  // A developer the operator lets make backups from the dashboard (backup_operators).
  await t.backend.admin.createDeveloper({ email: "ops@example.com", password: "operator password 1" });
  await t.backend.close();
  // An event still queued when writes stopped (no dispatcher runs here).
  const sqlite = openDatabase(join(t.dataDir, "tenantd.db"));
  const repos = createRepositories(sqlite);
  await repos.meta.set("public_url", "https://api.example.com");
  await repos.webhooks.enqueue({ id: "evt_queued", appId: t.app.id, event: "tenant.created", tenantId: tenant.id, data: t.backend.core.secrets.seal("{}"), createdAt: now });
  // An export link mailed and not used yet (export_links).
  await repos.emailTokens.issueExportLink({ hash: "e".repeat(64), appId: t.app.id, tenantId: tenant.id, createdAt: now, expiresAt: now + 86_400_000 });
  await repos.developers.setBackupOperator((await repos.developers.findByEmail("ops@example.com"))!.id, true, now);
  sqlite.close();
  return { dataDir: t.dataDir, appId: t.app.id, publishableKey: t.app.publishableKey, tenant, listed, file: { url: up.body.file.url as string, bytes } };
}

/** Every copied table's rows, in key order, exactly as SQLite holds them (types included). */
function dump(dataDir: string): Record<string, unknown[]> {
  const db = new Database(join(dataDir, "tenantd.db"), { readonly: true });
  db.defaultSafeIntegers(true);
  try {
    return Object.fromEntries(
      COPY_TABLES.map((t) => {
        const order = t.engineOrder ? "rowid" : t.key.join(", ");
        const rows = db.prepare(`SELECT ${Object.keys(t.columns).map((c) => `"${c}", typeof("${c}") AS "${c}:type"`).join(", ")} FROM "${t.name}" ORDER BY ${order}`).all();
        return [t.name, rows];
      }),
    );
  } finally {
    db.close();
  }
}

/** Serves the API on a store (the copy), at the populated store's clock. */
async function serveOn(config: { dataDir: string; database?: { url: string } }) {
  const backend = await createTenantBackend({ ...config, logger: "silent", argon2: TEST_ARGON2, clock: testClock(START + 60_000), rateLimit: false, publicUrl: "http://localhost:3000", bootstrap: false });
  const request = async (method: string, path: string, opts: Parameters<typeof buildRequest>[3] = {}) => toReply(await backend.fetch(buildRequest("http://localhost", method, path, opts)));
  return { backend, request };
}

/** What a signed-in tenant sees on a copy: its access token, a refresh, its records, its file. */
async function expectTenantCarriesOver(p: Populated, on: Awaited<ReturnType<typeof serveOn>>, refreshToken: string): Promise<string> {
  const me = await on.request("GET", "/api/v1/auth/me", { bearer: p.tenant.bearer });
  expect(me.status, me.text).toBe(200);
  expect(me.body.tenant.id).toBe(p.tenant.id);
  const listed = await on.request("GET", `/api/v1/data/notes?sort=${encodeURIComponent(JSON.stringify({ rank: 1 }))}`, { bearer: p.tenant.bearer });
  expect(listed.text).toBe(p.listed);
  const file = await on.backend.fetch(new Request(`http://localhost${new URL(p.file.url).pathname}`));
  expect(file.status).toBe(200);
  expect(Buffer.from(await file.arrayBuffer()).equals(p.file.bytes)).toBe(true);
  const refreshed = await on.request("POST", "/api/v1/auth/refresh", { key: p.publishableKey, body: { refreshToken } });
  expect(refreshed.status, refreshed.text).toBe(200);
  const again = await on.request("GET", "/api/v1/auth/me", { bearer: { accessToken: refreshed.body.accessToken, appId: p.appId } });
  expect(again.status).toBe(200);
  return refreshed.body.refreshToken as string;
}

describe("tenantd store copy", () => {
  it("lists every table and column both schemas hold, or says why one is not copied", async () => {
    const url = await database();
    const sqliteDir = dir();
    const engines = { sqlite: sqliteColumns(join(sqliteDir, "tenantd.db")), postgres: await postgresColumns(url) };
    for (const [engine, tables] of Object.entries(engines)) {
      const copied = new Map(COPY_TABLES.map((t) => [t.name, Object.keys(t.columns)]));
      for (const [table, columns] of Object.entries(tables)) {
        if (NOT_COPIED[table]) continue;
        expect(copied.has(table), `${engine} table ${table} is neither in COPY_TABLES nor in NOT_COPIED`).toBe(true);
        const extra = columns.filter((c) => !copied.get(table)!.includes(c) && !ENGINE_COLUMNS[`${table}.${c}`]);
        expect(extra, `${engine} columns of ${table} missing from COPY_TABLES`).toEqual([]);
        const missing = copied.get(table)!.filter((c) => !columns.includes(c));
        expect(missing, `COPY_TABLES columns of ${table} that ${engine} lacks`).toEqual([]);
      }
      for (const t of COPY_TABLES) expect(tables[t.name], `${engine} has no table ${t.name}`).toBeDefined();
    }
  });

  it("moves a store with every kind of row SQLite → PostgreSQL → SQLite: tokens keep working, records and blobs stay byte-identical", { timeout: 120_000 }, async () => {
    const p = await populate();
    const original = dump(p.dataDir);
    for (const t of COPY_TABLES) expect(original[t.name]!.length, `the populated store has rows in ${t.name}`).toBeGreaterThan(0);

    // SQLite → PostgreSQL, the URL from an environment variable; the PostgreSQL side's data directory gets the server key.
    const url = await database();
    const pgSide = dir();
    const there = await runCli(["store", "copy", "--from", p.dataDir, "--to", "env:COPY_TARGET_URL"], { env: { COPY_TARGET_URL: url, TENANTD_DATA_DIR: pgSide } });
    expect(there.code, there.stderr).toBe(0);
    expect(there.stdout).toMatch(/^records\s+3\s+3\s+ok$/m);
    expect(there.stdout).toMatch(/^file blobs\s+1\s+1\s+ok$/m);
    expect(there.stdout).not.toMatch(/DIFFERENT/);
    expect(there.stderr).toMatch(/^ {2}records\s+3 rows \(\d+\.\d s\)$/m);
    expect(readFileSync(join(pgSide, "secret.key"), "utf8")).toBe(readFileSync(join(p.dataDir, "secret.key"), "utf8"));
    // The source directory remembers the move: a command on it without the database URL
    // refuses to open the old SQLite file and says how to reach the moved store.
    const host = new URL(url);
    expect(there.stdout).toContain(`${p.dataDir} now refuses to start on its SQLite file`);
    const stale = await runCli(["app", "list", "--data-dir", p.dataDir]);
    expect(stale.code).not.toBe(0);
    expect(stale.stderr).toContain(`moved to PostgreSQL (${host.hostname}:${host.port}${host.pathname}`);
    expect(stale.stderr).toContain("TENANTD_DATABASE_URL");
    expect(stale.stderr).not.toContain(host.password || "\u0000");
    const staleServer = await createTenantBackend({ dataDir: p.dataDir, logger: "silent", argon2: TEST_ARGON2 }).then(
      () => "started",
      (e: Error) => e.message,
    );
    expect(staleServer).toMatch(/moved to PostgreSQL/);

    // PostgreSQL → a new SQLite directory, the URL on stdin, JSON report.
    const back = join(dir(), "back");
    const home = await runCli(["store", "copy", "--from", "-", "--to", back, "--json"], { input: `${url}\n`, env: { TENANTD_DATA_DIR: pgSide } });
    expect(home.code, home.stderr + home.stdout).toBe(0);
    const report = JSON.parse(home.stdout);
    expect(report.ok).toBe(true);
    expect(report.tables.map((r: { table: string }) => r.table)).toEqual(COPY_TABLES.map((t) => t.name));
    expect(report.blobs).toMatchObject({ files: 1, copied: 1, bytes: p.file.bytes.length, missing: [], mismatched: [] });
    expect(report.indexes).toBe(2);
    // Every row of every table, byte for byte and type for type, as the original.
    expect(dump(back)).toEqual(original);
    expect(readFileSync(join(back, "secret.key"), "utf8")).toBe(readFileSync(join(p.dataDir, "secret.key"), "utf8"));

    // PostgreSQL → another PostgreSQL database (both URLs from variables; the blobs share one folder, so stay put).
    const url2 = await database();
    const pgToPg = await runCli(["store", "copy", "--from", "env:A", "--to", "env:B"], { env: { A: url, B: url2, TENANTD_DATA_DIR: pgSide } });
    expect(pgToPg.code, pgToPg.stderr).toBe(0);
    expect(pgToPg.stdout).toMatch(/^records\s+3\s+3\s+ok$/m);
    expect(pgToPg.stdout).toMatch(/^blobs: left in place .*; checked$/m);

    // The API on the PostgreSQL copy, then on the SQLite copy: the tenant signed in before the move carries on.
    const onPg = await serveOn({ dataDir: pgSide, database: { url } });
    try {
      await expectTenantCarriesOver(p, onPg, p.tenant.refreshToken);
    } finally {
      await onPg.backend.close();
    }
    const onSqlite = await serveOn({ dataDir: back });
    try {
      await expectTenantCarriesOver(p, onSqlite, p.tenant.refreshToken);
      // The declared index was built on the copy, and the unique field is enforced there.
      const dup = await onSqlite.request("POST", "/api/v1/data/notes", { bearer: p.tenant.bearer, body: { data: { slug: "a" } } });
      expect(dup.status).toBe(409);
    } finally {
      await onSqlite.backend.close();
    }

    // Into a target that is not empty: refused with what it holds; --restart empties it and copies again.
    const refused = await runCli(["store", "copy", "--from", p.dataDir, "--to", back]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--to .*back is not empty: it holds rows in server_meta \(\d+\), developers \(2\), .*tenants \(\d+\).*--restart/);
    const restarted = await runCli(["store", "copy", "--from", p.dataDir, "--to", back, "--restart"]);
    expect(restarted.code, restarted.stderr).toBe(0);
  });

  it("a copy that stopped halfway is named by the next run; --restart copies from scratch (SQLite → SQLite)", async () => {
    const source = dir();
    const b = await createTenantBackend({ dataDir: source, logger: "silent", argon2: TEST_ARGON2 });
    const appId = b.defaultApp!.id;
    await b.close();
    const target = join(dir(), "copy");
    mkdirSync(target);
    const from = openSqliteCopyEnd(join(source, "tenantd.db"), source);
    const to = openSqliteCopyEnd(join(target, "tenantd.db"), target);
    const failing: CopyEnd = { ...to, insert: async (table, rows) => (table.name === "apps" ? Promise.reject(new Error("connection lost")) : to.insert(table, rows)) };
    await from.snapshot();
    await expect(copyTables(from, failing, { describe: source })).rejects.toThrow(/^apps: writing rows 1–1 into .*copy failed: connection lost$/);
    await from.close();
    await to.close();

    const again = await runCli(["store", "copy", "--from", source, "--to", target]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^tenantd: --to .*copy holds an unfinished copy \(started \d{4}-\d\d-\d\dT.* from .*\). Run the same command again with --restart/);
    const restarted = await runCli(["store", "copy", "--from", source, "--to", target, "--restart", "--json"]);
    expect(restarted.code, restarted.stderr).toBe(0);
    const report = JSON.parse(restarted.stdout);
    expect(report.tables.find((r: { table: string }) => r.table === "apps")).toEqual({ table: "apps", source: 1, target: 1, ok: true });
    expect(report.tables.find((r: { table: string }) => r.table === "server_meta")).toMatchObject({ target: 0, ok: true });
    const copy = await serveOn({ dataDir: target });
    try {
      expect((await copy.backend.admin.listApps()).map((a) => a.id)).toEqual([appId]);
    } finally {
      await copy.backend.close();
    }
  });

  it("refuses bad inputs in the CLI's words, without a stack trace or a password", async () => {
    const source = dir();
    const missing = await runCli(["store", "copy", "--from", join(source, "nope"), "--to", dir()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^tenantd: --from .*nope: no tenantd data directory there \(no tenantd\.db\)/);

    const backend = await createTenantBackend({ dataDir: source, logger: "silent", bootstrap: true });
    await backend.close();

    const same = await runCli(["store", "copy", "--from", source, "--to", join(source, ".")]);
    expect(same.code).toBe(1);
    expect(same.stderr).toMatch(/--from and --to name the same store/);

    const unreachable = await runCli(["store", "copy", "--from", source, "--to", "postgres://copier:hunter2secret@127.0.0.1:1/tenantd"]);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/tenantd: cannot open --to postgres:\/\/copier:\*\*\*@127\.0\.0\.1:1\/tenantd: .*ECONNREFUSED/);
    expect(unreachable.stderr).toMatch(/visible to every user of this machine \(ps\)/);
    expect(unreachable.stderr).not.toContain("hunter2secret");
    expect(unreachable.stderr).not.toMatch(/\n\s+at /);

    const noVar = await runCli(["store", "copy", "--from", source, "--to", "env:NOT_SET_ANYWHERE"]);
    expect(noVar.code).toBe(1);
    expect(noVar.stderr).toMatch(/--to env:NOT_SET_ANYWHERE: the environment variable NOT_SET_ANYWHERE is not set/);

    const noFlag = await runCli(["store", "copy", "--from", source]);
    expect(noFlag.code).toBe(1);
    expect(noFlag.stderr).toMatch(/--to is required/);

    // A target data directory with another server key: the copy would lock every tenant out.
    const other = dir();
    const otherBackend = await createTenantBackend({ dataDir: other, logger: "silent", bootstrap: false });
    await otherBackend.close();
    rmSync(join(other, "tenantd.db"));
    const wrongKey = await runCli(["store", "copy", "--from", source, "--to", other]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/holds another server key than the source's/);
  });
});
