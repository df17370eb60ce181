// The audit trail (docs/audit.md): who did what, from where, in a hash chain per app that
// `tenantd audit verify` proves, pruned by retention without breaking the proof.
import { runCommand } from "citty";
import { afterEach, describe, expect, it, vi } from "vitest";
import auditCli from "../src/cli/audit.ts";
import { audit } from "../src/audit/audit.ts";
import { verifyChain } from "../src/audit/verify.ts";
import { runMaintenance } from "../src/maintenance.ts";
import { cliStoreEnv, developerSession, expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { storeRows } from "./_store.ts";
import { tokenFromOutbox } from "./_email.ts";

const DAY = 24 * 3600 * 1000;
const PASSWORD = "correct horse battery";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

async function owned() {
  const t = await startBackend();
  const developer = await developerSession(t);
  // The default app has no owner until one developer exists: give it to this one.
  await t.backend.admin.setAppOwner(t.app.id, (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.email);
  const trail = async (query = "") => {
    const res = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/audit${query}`, { developer });
    expect(res.status, res.text).toBe(200);
    return res.body as { entries: any[]; nextCursor: string | null };
  };
  return { t, developer, trail };
}

const actions = (page: { entries: { action: string }[] }) => page.entries.map((e) => e.action);

async function cli(args: string[]): Promise<string> {
  let out = "";
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out += String(chunk);
    return true;
  });
  for (const [k, v] of Object.entries(await cliStoreEnv(args))) vi.stubEnv(k, v);
  await runCommand(auditCli, { rawArgs: args });
  vi.mocked(process.stdout.write).mockRestore();
  return out;
}

describe("audit trail: developer actions", () => {
  it("records who changed what, from which address, with the request id, never a secret's value", async () => {
    const { t, developer, trail } = await owned();
    const base = `/api/v1/admin/apps/${t.app.id}`;
    const headers = { "x-request-id": "req-settings-1", "user-agent": "dashboard-test/1.0" };
    const patch = await t.request("PATCH", base, { developer, headers, body: { settings: { signupMode: "closed", billing: { stripeSecretKey: "sk_test_secret_value" } } } });
    expect(patch.status, patch.text).toBe(200);
    expect((await t.request("POST", `${base}/rotate-key`, { developer })).status).toBe(200);
    expect((await t.request("POST", `${base}/secret-key`, { developer })).status).toBe(200);

    const page = await trail();
    expect(actions(page)).toEqual(["app.secret_key_rotated", "app.publishable_key_rotated", "app.updated", "app.owner_changed"]);
    const me = (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer;
    expect(page.entries[2]).toMatchObject({
      actor: { type: "developer", id: me.id },
      action: "app.updated",
      requestId: "req-settings-1",
      client: "dashboard-test/1.0",
      details: { settings: ["signupMode", "billing.stripeSecretKey"] },
    });
    expect(JSON.stringify(page)).not.toContain("sk_test_secret_value");
    // The operator's change through backend.admin (the CLI's path) is the operator's.
    expect(page.entries[3]).toMatchObject({ actor: { type: "operator", id: null }, action: "app.owner_changed" });
  });

  it("records tenant administration and plan changes, and filters by tenant, action prefix and actor", async () => {
    const { t, developer, trail } = await owned();
    const base = `/api/v1/admin/apps/${t.app.id}`;
    const alice = await signupTenant(t, { email: "alice@example.com" });
    const bob = await signupTenant(t, { email: "bob@example.com" });
    expect((await t.request("POST", `${base}/tenants/${alice.id}/sessions/end`, { developer })).status).toBe(200);
    const plan = await t.request("POST", `${base}/plans`, { developer, body: { name: "Pro", slug: "pro", priceCents: 500, entitlements: { pro: true } } });
    expect(plan.status, plan.text).toBe(201);
    expect((await t.request("POST", `${base}/tenants/${bob.id}/billing/gift`, { developer, body: { planId: "pro" } })).status).toBe(200);
    expect((await t.request("POST", `${base}/plans/${plan.body.plan.id}/archive`, { developer })).status).toBe(200);
    expect((await t.request("DELETE", `${base}/tenants/${bob.id}`, { developer })).status).toBe(204);

    expect(actions(await trail(`?tenant=${alice.id}`))).toEqual(["tenant.sessions_ended", "tenant.signed_up"]);
    expect(actions(await trail(`?tenant=${bob.id}`))).toEqual(["tenant.deleted", "billing.gift_granted", "tenant.signed_up"]);
    expect(actions(await trail("?action=plan.*"))).toEqual(["plan.archived", "plan.created"]);
    expect(actions(await trail("?action=tenant.signed_up&actor=tenant"))).toEqual(["tenant.signed_up", "tenant.signed_up"]);
    expect((await trail("?actor=developer")).entries.every((e) => e.actor.type === "developer")).toBe(true);
  });

  it("pages newest first with a cursor, and answers 400 naming a bad parameter, 404 for another developer's app", async () => {
    const { t, developer, trail } = await owned();
    for (let i = 0; i < 5; i++) await audit(t.backend.core, { appId: t.app.id, action: `test.step_${i}` });
    const first = await trail("?action=test.*&limit=2");
    expect(actions(first)).toEqual(["test.step_4", "test.step_3"]);
    const second = await trail(`?action=test.*&limit=2&cursor=${first.nextCursor}`);
    expect(actions(second)).toEqual(["test.step_2", "test.step_1"]);
    const last = await trail(`?action=test.*&limit=2&cursor=${second.nextCursor}`);
    expect([actions(last), last.nextCursor]).toEqual([["test.step_0"], null]);
    const t0 = new Date(t.clock()).toISOString();
    expect((await trail(`?from=${encodeURIComponent(t0)}&action=test.*`)).entries).toHaveLength(5);
    expect((await trail(`?to=${encodeURIComponent(t0)}&action=test.*`)).entries).toHaveLength(0);

    for (const [query, field] of [["limit=0", "limit"], ["limit=501", "limit"], ["cursor=abc", "cursor"], ["actor=robot", "actor"], ["from=yesterday", "from"], ["tenant=a&tenant=b", "tenant"]] as const) {
      const res = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/audit?${query}`, { developer });
      expectError(res, 400, "invalid_request");
      expect(res.body.message).toContain(field);
    }
    const other = await developerSession(t);
    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/audit`, { developer: other }), 404, "not_found");
    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/audit`), 401, "unauthorized");
  });
});

describe("audit trail: tenant security events", () => {
  it("records sign-up, sign-in with method and client, sign-out, password reset and deletion; a tenant reads only its own", async () => {
    const { t, trail } = await owned();
    const key = t.app.publishableKey;
    const alice = await signupTenant(t, { email: "alice@example.com" });
    await signupTenant(t, { email: "bob@example.com" });
    const login = await t.request("POST", "/api/v1/auth/login", { key, headers: { "user-agent": "AliceBrowser/2" }, body: { email: "alice@example.com", password: PASSWORD } });
    expect(login.status, login.text).toBe(200);
    const bearer = { accessToken: login.body.accessToken, appId: t.app.id };
    expect((await t.request("POST", "/api/v1/auth/logout", { bearer, body: {} })).status).toBe(204);

    expect((await t.request("POST", "/api/v1/auth/request-password-reset", { key, body: { email: "alice@example.com" } })).status).toBe(204);
    const token = await tokenFromOutbox(t, "alice@example.com", "reset");
    expect((await t.request("POST", "/api/v1/auth/reset-password", { key, body: { token, password: "a brand new password" } })).status).toBe(200);
    const again = await t.request("POST", "/api/v1/auth/login", { key, body: { email: "alice@example.com", password: "a brand new password" } });
    const mine = { accessToken: again.body.accessToken, appId: t.app.id };

    const activity = await t.request("GET", "/api/v1/account/activity", { bearer: mine });
    expect(activity.status, activity.text).toBe(200);
    expect(activity.body.activity.map((a: { action: string }) => a.action)).toEqual([
      "tenant.signed_in",
      "tenant.password_reset",
      "tenant.signed_out",
      "tenant.signed_in",
      "tenant.signed_up",
    ]);
    expect(activity.body.activity[3]).toMatchObject({ actor: "you", client: "AliceBrowser/2", details: { method: "password" } });
    expect(activity.body.activity[3]).not.toHaveProperty("hash");
    expectError(await t.request("GET", "/api/v1/account/activity?limit=0", { bearer: mine }), 400, "invalid_request");
    expectError(await t.request("GET", "/api/v1/account/activity"), 401, "unauthorized");

    expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: mine })).status).toBe(200);
    expect((await trail(`?tenant=${alice.id}&action=tenant.deleted`)).entries[0]).toMatchObject({ actor: { type: "tenant", id: alice.id }, details: { reason: "self_delete" } });
  });

  it("records a client's wrong passwords once, when they reach the point where the client must wait", async () => {
    const t = await startBackend({ rateLimit: { perIp: 1000, perEmail: 1000 } });
    const alice = await signupTenant(t, { email: "alice@example.com" });
    const attempt = () => t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "alice@example.com", password: "wrong password" } });
    for (let i = 0; i < 5; i++) expectError(await attempt(), 401, "invalid_credentials");
    expectError(await attempt(), 429, "rate_limited");
    t.clock.advance(60_000);
    expectError(await attempt(), 401, "invalid_credentials");
    const page = await t.backend.admin.listAudit(t.app.id, { action: "tenant.sign_in_failures" });
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]).toMatchObject({ tenantId: alice.id, actor: { type: "system" }, details: { failures: 5 } });
  });
});

describe("audit trail: the chain", () => {
  async function withEntries(n: number): Promise<TestBackend> {
    const t = await startBackend();
    for (let i = 0; i < n; i++) {
      await audit(t.backend.core, { appId: t.app.id, action: "test.entry", details: { i } });
      t.clock.advance(DAY);
    }
    return t;
  }

  it("verifies, and names the first entry changed, removed or re-chained", async () => {
    const t = await withEntries(6);
    const rows = storeRows(t.backend);
    expect(await verifyChain(t.backend.core, t.app.id)).toMatchObject({ ok: true, entries: 6, firstSeq: 1, lastSeq: 6 });

    await rows.run("UPDATE audit_log SET details = ? WHERE app_id = ? AND seq = 3", '{"i":99}', t.app.id);
    expect(await verifyChain(t.backend.core, t.app.id)).toMatchObject({ ok: false, seq: 3, reason: expect.stringContaining("changed") });
    await rows.run("UPDATE audit_log SET details = ? WHERE app_id = ? AND seq = 3", '{"i":2}', t.app.id);
    expect((await verifyChain(t.backend.core, t.app.id)).ok).toBe(true);

    // Re-chaining needs the server's key: a hash recomputed without it does not pass.
    await rows.run("UPDATE audit_log SET hash = ? WHERE app_id = ? AND seq = 6", "f".repeat(64), t.app.id);
    expect(await verifyChain(t.backend.core, t.app.id)).toMatchObject({ ok: false, seq: 6 });
    await rows.run("DELETE FROM audit_log WHERE app_id = ? AND seq = 4", t.app.id);
    expect(await verifyChain(t.backend.core, t.app.id)).toMatchObject({ ok: false, seq: 4, reason: expect.stringContaining("missing") });
  });

  it("prunes past the app's retention in housekeeping and still verifies from the cut; new entries chain on", async () => {
    const t = await withEntries(5);
    expect((await t.backend.admin.updateApp(t.app.id, { settings: { audit: { retentionDays: 2 } } })).settings).toMatchObject({ audit: { retentionDays: 2 } });
    await runMaintenance(t.backend.core);
    const report = await verifyChain(t.backend.core, t.app.id);
    // Entries 1-3 are 5, 4 and 3 days old; 4, 5 and the update (6) are kept.
    expect(report).toMatchObject({ ok: true, prunedSeq: 3, firstSeq: 4, lastSeq: 6, entries: 3 });
    await audit(t.backend.core, { appId: t.app.id, action: "test.after_prune" });
    expect(await verifyChain(t.backend.core, t.app.id)).toMatchObject({ ok: true, firstSeq: 4, lastSeq: 7 });
    await expect(t.backend.admin.updateApp(t.app.id, { settings: { audit: { retentionDays: 0 } } })).rejects.toThrow(/audit\.retentionDays/);
  });

  it("keeps one unbroken chain when many entries are appended at once", async () => {
    const t = await startBackend();
    await Promise.all(Array.from({ length: 40 }, (_, i) => audit(t.backend.core, { appId: t.app.id, action: "test.concurrent", details: { i } })));
    const seqs = await storeRows(t.backend).column<number>("SELECT seq FROM audit_log WHERE app_id = ? ORDER BY seq", t.app.id);
    expect(seqs.map(Number)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(await verifyChain(t.backend.core, t.app.id)).toMatchObject({ ok: true, entries: 40 });
  });

  it("sends each entry as an audit.entry webhook event when the app opts in", async () => {
    const t = await startBackend();
    await audit(t.backend.core, { appId: t.app.id, action: "test.quiet" });
    await t.backend.admin.updateApp(t.app.id, { settings: { audit: { webhook: true } } });
    await audit(t.backend.core, { appId: t.app.id, action: "test.loud", details: { n: 1 } });
    const rows = storeRows(t.backend);
    const events = await rows.column<string>("SELECT data FROM webhook_events WHERE app_id = ? AND event = 'audit.entry' UNION ALL SELECT body_sealed FROM webhook_deliveries WHERE app_id = ? AND event = 'audit.entry'", t.app.id, t.app.id);
    const opened = events.filter((e) => e !== null).map((e) => t.backend.core.secrets.open(e));
    expect(opened.some((e) => e.includes("test.loud"))).toBe(true);
    expect(opened.some((e) => e.includes("test.quiet"))).toBe(false);
  });

  it("tenantd audit verify and list", async () => {
    const t = await withEntries(3);
    const dir = ["--data-dir", t.dataDir];
    expect(await cli(["verify", ...dir])).toContain(`${t.app.id}: ok, 3 entries (1 to 3)`);
    const listed = JSON.parse(await cli(["list", ...dir, "--app", t.app.id, "--limit", "2", "--json"]));
    expect(listed.entries.map((e: { seq: number }) => e.seq)).toEqual([3, 2]);
    expect(listed.nextCursor).toBe("2");
    await storeRows(t.backend).run("UPDATE audit_log SET action = 'test.forged' WHERE app_id = ? AND seq = 2", t.app.id);
    const verified = JSON.parse(await cli(["verify", ...dir, "--app", t.app.id, "--json"]));
    expect(verified).toMatchObject({ ok: false, chains: [{ appId: t.app.id, ok: false, seq: 2 }] });
    expect(process.exitCode).toBe(1);
  });
});
