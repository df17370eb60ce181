import { describe, expect, it } from "vitest";
import { expectError, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { billingBackend } from "./billing-fixtures.ts";
import { gift, PASSWORD } from "./family-fixtures.ts";
import { storeRows } from "./_store.ts";

const PATH = "/api/v1/tenants/me/invite-tokens";
const iso = (ms: number) => new Date(ms).toISOString();

function client(t: TestBackend) {
  return {
    create: (who: TestTenant, body: unknown = {}) => t.request("POST", PATH, { bearer: who.bearer, body }),
    list: (who: TestTenant) => t.request("GET", PATH, { bearer: who.bearer }),
    remove: (who: TestTenant, id: string) => t.request("DELETE", `${PATH}/${id}`, { bearer: who.bearer }),
    signup: (email: string, inviteToken?: string) => t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email, password: PASSWORD, inviteToken } }),
    setSettings: (settings: Record<string, unknown>) => t.backend.admin.updateApp(t.app.id, { settings }),
  };
}

async function setup(defaultQuota?: number) {
  const t = await startBackend();
  const c = client(t);
  if (defaultQuota !== undefined) await c.setSettings({ invites: { defaultQuota } });
  return { t, c, inviter: await signupTenant(t) };
}

describe("invite tokens", () => {
  it("create shows the plaintext once; the list never does; quota follows the app default (5)", async () => {
    const { t, c, inviter } = await setup();
    const res = await c.create(inviter, { note: "for Kim" });
    expect(res.status).toBe(201);
    const token = res.body.token;
    expect(res.body).toEqual({
      token: { id: token.id, token: expect.stringMatching(/^inv_/), note: "for Kim", status: "pending", createdAt: iso(t.clock()), expiresAt: iso(t.clock() + 30 * 86400_000), usedAt: null, usedByTenantId: null },
      quota: { limit: 5, used: 1, remaining: 4 },
    });
    const listed = await c.list(inviter);
    expect(listed.status).toBe(200);
    const { token: _plaintext, ...stored } = token;
    expect(listed.body).toEqual({ tokens: [stored], quota: { limit: 5, used: 1, remaining: 4 } });
    expect(listed.text).not.toContain(token.token);
    expect(await storeRows(t.backend).value("SELECT COUNT(*) FROM invite_tokens WHERE token_hash = ?", token.token)).toBe(0);
    // Another tenant sees none of them and cannot delete them.
    const other = await signupTenant(t);
    expect((await c.list(other)).body).toEqual({ tokens: [], quota: { limit: 5, used: 0, remaining: 5 } });
    expectError(await c.remove(other, token.id), 404, "not_found");
  });

  it("quota exhaustion is 402; deleting an unused token frees its slot; used ones stay and keep theirs", async () => {
    const { c, inviter } = await setup(2);
    const a = (await c.create(inviter)).body.token;
    const b = (await c.create(inviter)).body.token;
    const full = await c.create(inviter);
    expectError(full, 402, "limit_reached");
    expect((await c.list(inviter)).body.quota).toEqual({ limit: 2, used: 2, remaining: 0 });

    const removed = await c.remove(inviter, a.id);
    expect(removed.status).toBe(200);
    expect(removed.body).toEqual({ quota: { limit: 2, used: 1, remaining: 1 } });
    expectError(await c.remove(inviter, a.id), 404, "not_found");
    expectError(await c.signup("a@example.com", a.token), 400, "invalid_token");
    const again = await c.create(inviter);
    expect(again.status).toBe(201);
    expect(again.body.quota).toEqual({ limit: 2, used: 2, remaining: 0 });

    expect((await c.signup("joined@example.com", b.token)).status).toBe(201);
    expectError(await c.remove(inviter, b.id), 409, "conflict");
    expectError(await c.create(inviter), 402, "limit_reached");
    expect((await c.list(inviter)).body.quota).toEqual({ limit: 2, used: 2, remaining: 0 });
  });

  it("concurrent creates never pass the quota", async () => {
    const { c, inviter } = await setup(2);
    const replies = await Promise.all(Array.from({ length: 5 }, () => c.create(inviter)));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 201, 402, 402, 402]);
    expect((await c.list(inviter)).body.tokens).toHaveLength(2);
  });

  it("single use, recording who joined; expiry follows the clock and frees the slot", async () => {
    const { t, c, inviter } = await setup(3);
    const token = (await c.create(inviter)).body.token;
    const joined = await c.signup("friend@example.com", token.token);
    expect(joined.status, joined.text).toBe(201);
    expectError(await c.signup("second@example.com", token.token), 400, "invalid_token");
    expect((await c.list(inviter)).body.tokens[0]).toMatchObject({ id: token.id, status: "used", usedAt: iso(t.clock()), usedByTenantId: joined.body.tenant.id });

    const short = (await c.create(inviter, { expiresInSeconds: 60 })).body.token;
    expect(short.expiresAt).toBe(iso(t.clock() + 60_000));
    t.clock.advance(59_999);
    expect((await c.list(inviter)).body.quota).toEqual({ limit: 3, used: 2, remaining: 1 });
    t.clock.advance(1);
    expectError(await c.signup("late@example.com", short.token), 400, "invalid_token");
    const listed = (await c.list(inviter)).body;
    expect(listed.tokens.find((x: { id: string }) => x.id === short.id).status).toBe("expired");
    expect(listed.quota).toEqual({ limit: 3, used: 1, remaining: 2 });
  });

  it("sign-up modes: invite_only needs a valid token; open refuses a bad one; closed refuses all", async () => {
    const { c, inviter } = await setup();
    const token = (await c.create(inviter)).body.token.token;
    expectError(await c.signup("typo@example.com", "inv_typo"), 400, "invalid_token");

    await c.setSettings({ signupMode: "invite_only" });
    expectError(await c.signup("none@example.com"), 403, "invite_required");
    expectError(await c.signup("bad@example.com", "inv_nope"), 400, "invalid_token");
    // An existing email with a bad token learns nothing about the email.
    expectError(await c.signup(inviter.email, "inv_nope"), 400, "invalid_token");
    await c.setSettings({ signupMode: "closed" });
    expectError(await c.signup("closed@example.com", token), 403, "signup_disabled");
    await c.setSettings({ signupMode: "invite_only" });
    expect((await c.signup("invited@example.com", token)).status).toBe(201);
    expectError(await c.signup("reuse@example.com", token), 400, "invalid_token");
  });

  it("an invite is used up atomically with the account: duplicate email keeps it, racing sign-ups get one account", async () => {
    const { t, c, inviter } = await setup();
    const token = (await c.create(inviter)).body.token;
    expectError(await c.signup(inviter.email, token.token), 409, "email_exists");
    expect((await c.list(inviter)).body.tokens[0].status).toBe("pending");

    const replies = await Promise.all(["race1@example.com", "race2@example.com", "race3@example.com"].map((e) => c.signup(e, token.token)));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 400, 400]);
    for (const r of replies.filter((r) => r.status === 400)) expectError(r, 400, "invalid_token");
    const count = await storeRows(t.backend).value("SELECT COUNT(*) FROM tenants WHERE email LIKE 'race%'");
    expect(count).toBe(1);
  });

  it("the quota comes from the invite_tokens entitlement: a number, or true for unlimited", async () => {
    const b = await billingBackend();
    const c = client(b.t);
    const tenant = await b.tenant();
    const plan = await b.plan({ name: "Inviter", slug: "inviter", entitlements: { invite_tokens: 1 } });
    await gift(b, tenant, plan.id);
    expect((await c.create(tenant)).body.quota).toEqual({ limit: 1, used: 1, remaining: 0 });
    expectError(await c.create(tenant), 402, "limit_reached");
    await b.admin("PATCH", `/plans/${plan.id}`, { entitlements: { invite_tokens: true } });
    expect((await c.create(tenant)).body.quota).toEqual({ limit: null, used: 2, remaining: null });
    await b.admin("PATCH", `/plans/${plan.id}`, { entitlements: { invite_tokens: false } });
    expect((await c.list(tenant)).body.quota).toEqual({ limit: 0, used: 2, remaining: 0 });
  });

  it("bad inputs are 400 with the field named; no bearer is 401", async () => {
    const { t, c, inviter } = await setup();
    const bad = [{ expiresInSeconds: 0 }, { expiresInSeconds: -5 }, { expiresInSeconds: 2.5 }, { expiresInSeconds: "3600" }, { expiresInSeconds: 366 * 86400 }, { note: 7 }, { note: "x".repeat(501) }, []];
    for (const body of bad) {
      const res = await c.create(inviter, body);
      expectError(res, 400, "invalid_request");
    }
    expect((await c.create(inviter, { expiresInSeconds: 0 })).body.message).toContain("expiresInSeconds");
    expectError(await t.request("POST", PATH, { bearer: inviter.bearer, raw: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    expectError(await t.request("POST", PATH, { body: {} }), 401, "unauthorized");
    expectError(await t.request("GET", PATH), 401, "unauthorized");
    expectError(await t.request("DELETE", `${PATH}/inv_x`), 401, "unauthorized");
    expectError(await c.signup("long@example.com", "x".repeat(201)), 400, "invalid_request");
    expect((await c.list(inviter)).body.tokens).toEqual([]);
  });
});
