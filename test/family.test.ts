import { describe, expect, it } from "vitest";
import { expectError, signupTenant, type TestTenant } from "./_helpers.ts";
import { claimsOf, DEFAULTS, devSubscribe, familyBackend, gift, PASSWORD, tenantFrom } from "./family-fixtures.ts";

const FAMILY = { family_seats: 2, storage: 100 };
const iso = (ms: number) => new Date(ms).toISOString();

describe("family lifecycle", () => {
  it("invite → consume new → email_exists + replace-with-family → list → remove → leave, entitlements at every step", async () => {
    const f = await familyBackend(2);
    const { t, owner, as } = f;
    const ownerView = { entitlements: FAMILY, source: "gift", familyOwnerEmail: null };
    expect(await f.view(owner)).toEqual(ownerView);
    expect((await as(owner, "GET", "/api/v1/tenants/me/family-invites")).body).toEqual({ invites: [], seats: { limit: 2, used: 0, pending: 0, remaining: 2 } });

    // Invite: the plaintext token once, 7 days by default.
    const created = await as(owner, "POST", "/api/v1/tenants/me/family-invites", { note: "for Sam" });
    expect(created.status).toBe(201);
    const invite = created.body.invite;
    expect(created.body).toEqual({
      invite: { id: invite.id, token: expect.stringMatching(/^fam_/), note: "for Sam", status: "pending", createdAt: iso(t.clock()), expiresAt: iso(t.clock() + 7 * 86400_000), usedAt: null, usedByTenantId: null },
      seats: { limit: 2, used: 0, pending: 1, remaining: 1 },
    });

    // Consume as a new person: a member account, signed in, whose token names the owner.
    const consumed = await f.consume(invite.token, "Sam@Example.com");
    expect(consumed.body).toEqual({
      result: "new",
      tenant: { id: expect.stringMatching(/^tnt_/), email: "sam@example.com", emailVerifiedAt: null, createdAt: iso(t.clock()) },
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      expiresIn: 900,
      refreshExpiresIn: 7776000,
      parentTenantId: owner.id,
    });
    const sam = tenantFrom(consumed, t.app.id);
    expect(claimsOf(sam.accessToken).pid).toBe(owner.id);
    const familyView = { entitlements: FAMILY, source: "family", familyOwnerEmail: owner.email };
    expect(await f.view(sam)).toEqual(familyView);
    expect(await f.b.subscription(sam)).toEqual({
      planId: f.plan.id, planName: "Family", planSlug: "family", status: "active", currentPeriodEnd: null, cancelAtPeriodEnd: false, source: "family", familyOwnerEmail: owner.email,
    });
    const introspected = await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: sam.bearer, body: { include: ["subscription"] } });
    expect(introspected.body).toMatchObject({ active: true, tenantId: sam.id, parentTenantId: owner.id, subscription: { source: "family", familyOwnerEmail: owner.email } });
    expect(await f.view(owner)).toEqual(ownerView);
    // The used invite cannot be used again, not even by another email.
    expectError(await f.consume(invite.token, "other@example.com"), 400, "invalid_token");

    // An existing account: consume answers email_exists and uses nothing up.
    t.clock.advance(1000);
    const alex = await signupTenant(t, { email: "alex@example.com" });
    expect(await f.view(alex)).toEqual({ entitlements: DEFAULTS, source: null, familyOwnerEmail: null });
    const second = await f.invite(owner);
    const exists = await f.consume(second.token, "ALEX@example.com");
    expect(exists.status).toBe(200);
    expect(exists.body).toEqual({ result: "email_exists", message: expect.stringContaining("replace-with-family") });
    expect(await f.view(alex)).toEqual({ entitlements: DEFAULTS, source: null, familyOwnerEmail: null });
    expect(await f.view(sam)).toEqual(familyView);
    expect((await as(owner, "GET", "/api/v1/tenants/me/family-invites")).body.seats).toEqual({ limit: 2, used: 1, pending: 1, remaining: 0 });
    const replaced = await as(alex, "POST", "/api/v1/tenants/me/replace-with-family", { token: second.token });
    expect(replaced.status, replaced.text).toBe(200);
    expect(replaced.body).toEqual({ ok: true, parentTenantId: owner.id, accessToken: expect.any(String), refreshToken: expect.any(String), expiresIn: 900, refreshExpiresIn: 7776000 });
    expect(claimsOf(replaced.body.accessToken)).toMatchObject({ sub: alex.id, pid: owner.id });
    expect(await f.view(alex)).toEqual(familyView);
    const alexNew = { ...alex, accessToken: replaced.body.accessToken, bearer: { accessToken: replaced.body.accessToken, appId: t.app.id } };
    expect((await t.request("GET", "/api/v1/auth/me", { bearer: alexNew.bearer })).status).toBe(200);

    // Lists: both invites used, seats full, members by join order.
    const listed = await as(owner, "GET", "/api/v1/tenants/me/family-invites");
    expect(listed.body.seats).toEqual({ limit: 2, used: 2, pending: 0, remaining: 0 });
    expect(listed.body.invites.map((i: Record<string, unknown>) => [i.id, i.status, i.usedByTenantId])).toEqual([
      [second.id, "used", alex.id],
      [invite.id, "used", sam.id],
    ]);
    expect(listed.text).not.toContain(invite.token);
    expectError(await as(owner, "POST", "/api/v1/tenants/me/family-invites", {}), 409, "seats_full");
    expect((await as(owner, "GET", "/api/v1/tenants/me/family/members")).body).toEqual({
      members: [
        { tenantId: sam.id, email: "sam@example.com", joinedAt: iso(t.clock() - 1000), active: true },
        { tenantId: alex.id, email: "alex@example.com", joinedAt: iso(t.clock()), active: true },
      ],
    });

    // Remove: at once, even for the access token that still carries pid.
    const removed = await as(owner, "POST", "/api/v1/tenants/me/family/remove-member", { member_tenant_id: alex.id });
    expect(removed.body).toEqual({ ok: true, removedMemberTenantId: alex.id });
    expect(await f.view(alexNew)).toEqual({ entitlements: DEFAULTS, source: null, familyOwnerEmail: null });
    const stale = await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: alexNew.bearer });
    expect(stale.body).toMatchObject({ active: true, parentTenantId: null });
    expect(claimsOf((await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: replaced.body.refreshToken } })).body.accessToken).pid).toBeNull();
    expectError(await as(owner, "POST", "/api/v1/tenants/me/family/remove-member", { member_tenant_id: alex.id }), 404, "not_found");
    expect((await as(owner, "GET", "/api/v1/tenants/me/family-invites")).body.seats).toEqual({ limit: 2, used: 1, pending: 0, remaining: 1 });

    // Leave: the member's own call, at once; a second leave has nothing to leave.
    expect((await as(sam, "POST", "/api/v1/tenants/me/family/leave")).body).toEqual({ ok: true });
    expect(await f.view(sam)).toEqual({ entitlements: DEFAULTS, source: null, familyOwnerEmail: null });
    expectError(await as(sam, "POST", "/api/v1/tenants/me/family/leave"), 403, "forbidden");
    expect((await as(owner, "GET", "/api/v1/tenants/me/family/members")).body).toEqual({ members: [] });
    expect(await f.view(owner)).toEqual(ownerView);
    // Nothing of theirs went: both still sign in.
    for (const email of ["sam@example.com", "alex@example.com"]) {
      expect((await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email, password: PASSWORD } })).status).toBe(200);
    }
  });

  it("a downgrade keeps the earliest members; a lapsed plan ends the family; the owner's deletion detaches members", async () => {
    const f = await familyBackend(3);
    const { t, owner, as } = f;
    const members: TestTenant[] = [];
    for (const name of ["first", "second", "third"]) {
      members.push(tenantFrom(await f.consume((await f.invite()).token, `${name}@example.com`), t.app.id));
      t.clock.advance(1000);
    }
    const sources = async () => Promise.all(members.map(async (m) => (await f.view(m)).source));
    const active = async () => (await as(owner, "GET", "/api/v1/tenants/me/family/members")).body.members.map((m: { active: boolean }) => m.active);
    expect(await sources()).toEqual(["family", "family", "family"]);

    await f.setSeats(1);
    expect(await sources()).toEqual(["family", null, null]);
    expect(await f.view(members[1]!)).toEqual({ entitlements: DEFAULTS, source: null, familyOwnerEmail: null });
    expect(await active()).toEqual([true, false, false]);
    expect((await as(owner, "GET", "/api/v1/tenants/me/family-invites")).body.seats).toEqual({ limit: 1, used: 3, pending: 0, remaining: 0 });
    // A freed seat goes to the next member in join order.
    await as(owner, "POST", "/api/v1/tenants/me/family/remove-member", { member_tenant_id: members[0]!.id });
    expect(await sources()).toEqual([null, "family", null]);
    await f.setSeats(3);
    expect(await sources()).toEqual([null, "family", "family"]);

    // The owner's gift ends: nobody has the family plan, but the owner still manages members.
    expect((await f.b.admin("DELETE", `/tenants/${owner.id}/billing/gift`)).status).toBe(204);
    expect(await sources()).toEqual([null, null, null]);
    expect(await f.view(owner)).toEqual({ entitlements: DEFAULTS, source: null, familyOwnerEmail: null });
    expect(await active()).toEqual([false, false]);
    expectError(await as(owner, "POST", "/api/v1/tenants/me/family-invites", {}), 409, "seats_full");

    await f.b.admin("POST", `/tenants/${owner.id}/billing/gift`, { planId: f.plan.id });
    expect(await sources()).toEqual([null, "family", "family"]);
    expect((await as(owner, "POST", "/api/v1/tenants/me/delete")).status).toBe(200);
    for (const m of members.slice(1)) {
      expect(await f.view(m)).toEqual({ entitlements: DEFAULTS, source: null, familyOwnerEmail: null });
      expect((await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: m.bearer })).body).toMatchObject({ active: true, parentTenantId: null });
      expect((await t.request("GET", "/api/v1/auth/me", { bearer: m.bearer })).status).toBe(200);
      expectError(await as(m, "POST", "/api/v1/tenants/me/family/leave"), 403, "forbidden");
    }
  });

  it("unlimited seats (family_seats: true) never fill up", async () => {
    const f = await familyBackend(true);
    for (let i = 0; i < 4; i++) await f.invite();
    expect((await f.as(f.owner, "GET", "/api/v1/tenants/me/family-invites")).body.seats).toEqual({ limit: null, used: 0, pending: 4, remaining: null });
  });
});

describe("family seats under concurrency", () => {
  it("two consumes racing for the last seat: exactly one joins", async () => {
    const f = await familyBackend(2);
    const [a, b] = [await f.invite(), await f.invite()];
    await f.setSeats(1);
    const replies = await Promise.all([f.consume(a.token, "racer-a@example.com"), f.consume(b.token, "racer-b@example.com")]);
    expect(replies.map((r) => r.status).sort()).toEqual([201, 409]);
    expectError(replies.find((r) => r.status === 409)!, 409, "seats_full");
    expect((await f.as(f.owner, "GET", "/api/v1/tenants/me/family/members")).body.members).toHaveLength(1);
    // The loser was not created at all, so it can sign up again later.
    const loser = replies.find((r) => r.status === 409) === replies[0] ? "racer-a@example.com" : "racer-b@example.com";
    expect((await f.t.request("POST", "/api/v1/auth/login", { key: f.t.app.publishableKey, body: { email: loser, password: PASSWORD } })).status).toBe(401);
  });

  it("concurrent invites never pass the seats", async () => {
    const f = await familyBackend(2);
    const replies = await Promise.all(Array.from({ length: 4 }, () => f.as(f.owner, "POST", "/api/v1/tenants/me/family-invites", {})));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 201, 409, 409]);
    expect((await f.as(f.owner, "GET", "/api/v1/tenants/me/family-invites")).body.seats).toEqual({ limit: 2, used: 0, pending: 2, remaining: 0 });
  });

  it("a tenant with pending invites of its own that joins another family loses those invites, even after leaving", async () => {
    const f = await familyBackend(2);
    const other = await f.b.tenant();
    await gift(f.b, other, f.plan.id);
    const pending = await f.invite(other);
    const joined = await f.as(other, "POST", "/api/v1/tenants/me/replace-with-family", { token: (await f.invite(f.owner)).token });
    expect(joined.status, joined.text).toBe(200);
    const asMember = { ...other, bearer: { accessToken: joined.body.accessToken, appId: f.t.app.id } };
    expect((await f.as(asMember, "POST", "/api/v1/tenants/me/family/leave")).status).toBe(200);
    // Not revived by leaving: it went when the tenant joined.
    expectError(await f.consume(pending.token, "late@example.com"), 400, "invalid_token");
    expect(await f.b.t.backend.core.db.tenants.findByEmail(f.t.app.id, "late@example.com")).toBeUndefined();
  });

  it("one invite used by a consume and a replace-with-family at once: exactly one joins", async () => {
    const f = await familyBackend(2);
    const invite = await f.invite();
    const existing = await signupTenant(f.t);
    const replies = await Promise.all([
      f.consume(invite.token, "newcomer@example.com"),
      f.as(existing, "POST", "/api/v1/tenants/me/replace-with-family", { token: invite.token }),
    ]);
    expect(replies.filter((r) => r.status < 300)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status >= 300)) expectError(r, 400, "invalid_token");
    expect((await f.as(f.owner, "GET", "/api/v1/tenants/me/family/members")).body.members).toHaveLength(1);
  });
});

describe("family refusals", () => {
  it("non-owners and non-members are refused with 403; other families' objects are 404", async () => {
    const f = await familyBackend(2);
    const { t, as, owner } = f;
    const stranger = await signupTenant(t);
    const member = tenantFrom(await f.consume((await f.invite()).token, "member@example.com"), t.app.id);
    const pending = await f.invite();
    const ownerOnly: [string, string, unknown?][] = [
      ["POST", "/api/v1/tenants/me/family-invites", {}],
      ["GET", "/api/v1/tenants/me/family-invites"],
      ["DELETE", `/api/v1/tenants/me/family-invites/${pending.id}`],
      ["GET", "/api/v1/tenants/me/family/members"],
      ["POST", "/api/v1/tenants/me/family/remove-member", { member_tenant_id: member.id }],
    ];
    for (const who of [stranger, member]) {
      for (const [method, path, body] of ownerOnly) expectError(await as(who, method, path, body), 403, "forbidden");
    }
    expectError(await as(stranger, "POST", "/api/v1/tenants/me/family/leave"), 403, "forbidden");
    expectError(await as(owner, "POST", "/api/v1/tenants/me/family/leave"), 403, "forbidden");
    for (const [method, path] of ownerOnly) expectError(await t.request(method, path), 401, "unauthorized");

    // Another owner's invite and member are not found, not forbidden.
    const other = await f.b.tenant();
    await f.b.admin("POST", `/tenants/${other.id}/billing/gift`, { planId: f.plan.id });
    expectError(await as(other, "DELETE", `/api/v1/tenants/me/family-invites/${pending.id}`), 404, "not_found");
    expectError(await as(other, "POST", "/api/v1/tenants/me/family/remove-member", { member_tenant_id: member.id }), 404, "not_found");
    expect((await f.view(member)).source).toBe("family");
  });

  it("revoke, expiry, replace-with-family conflicts and bad inputs", async () => {
    const f = await familyBackend(5);
    const { t, as, owner } = f;
    const revoked = await f.invite();
    const res = await as(owner, "DELETE", `/api/v1/tenants/me/family-invites/${revoked.id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true, revokedInviteId: revoked.id, seats: { limit: 5, used: 0, pending: 0, remaining: 5 } });
    expectError(await f.consume(revoked.token, "late@example.com"), 400, "invalid_token");
    expectError(await as(owner, "DELETE", `/api/v1/tenants/me/family-invites/${revoked.id}`), 404, "not_found");

    const short = await f.invite(owner, { expiresInSeconds: 60 });
    t.clock.advance(60_000);
    expectError(await f.consume(short.token, "slow@example.com"), 400, "invalid_token");
    const listed = await as(owner, "GET", "/api/v1/tenants/me/family-invites");
    expect(listed.body.invites[0]).toMatchObject({ id: short.id, status: "expired" });
    expect(listed.body.seats).toEqual({ limit: 5, used: 0, pending: 0, remaining: 5 });

    const used = await f.invite();
    const member = tenantFrom(await f.consume(used.token, "member@example.com"), t.app.id);
    expectError(await as(owner, "DELETE", `/api/v1/tenants/me/family-invites/${used.id}`), 409, "conflict");
    expectError(await as(member, "POST", "/api/v1/tenants/me/replace-with-family", { token: (await f.invite()).token }), 409, "conflict");
    expectError(await as(owner, "POST", "/api/v1/tenants/me/replace-with-family", { token: (await f.invite()).token }), 409, "conflict");
    const someone = await signupTenant(t);
    expectError(await as(someone, "POST", "/api/v1/tenants/me/replace-with-family", { token: "fam_nope" }), 400, "invalid_token");
    expectError(await as(someone, "POST", "/api/v1/tenants/me/replace-with-family", {}), 400, "invalid_request");
    expectError(await t.request("POST", "/api/v1/tenants/me/replace-with-family", { body: { token: "x" } }), 401, "unauthorized");

    const token = (await f.invite()).token;
    const consume = (body: unknown, key: string | null = t.app.publishableKey) => t.request("POST", "/api/v1/auth/family-invite/consume", { key: key ?? undefined, body });
    const bad: [unknown, number, string][] = [
      [{ email: "a@example.com", password: PASSWORD }, 400, "invalid_request"],
      [{ token, password: PASSWORD }, 400, "invalid_request"],
      [{ token, email: "not-an-email", password: PASSWORD }, 400, "invalid_request"],
      [{ token, email: "a@example.com", password: "short" }, 400, "invalid_request"],
      [{ token: "fam_unknown", email: "a@example.com", password: PASSWORD }, 400, "invalid_token"],
      [[], 400, "invalid_request"],
    ];
    for (const [body, status, code] of bad) expectError(await consume(body), status, code);
    expectError(await consume({ token, email: "a@example.com", password: PASSWORD }, null), 401, "unauthorized");
    expectError(await t.request("POST", "/api/v1/auth/family-invite/consume", { key: t.app.publishableKey, raw: "{", headers: { "content-type": "application/json" } }), 400, "invalid_json");
    // An ordinary invite token is not a family invite.
    const inviteToken = (await as(someone, "POST", "/api/v1/tenants/me/invite-tokens", {})).body.token.token;
    expectError(await consume({ token: inviteToken, email: "b@example.com", password: PASSWORD }), 400, "invalid_token");
    for (const body of [{ expiresInSeconds: 0 }, { expiresInSeconds: 1.5 }, { expiresInSeconds: "60" }, { expiresInSeconds: 366 * 86400 }, { note: "x".repeat(501) }]) {
      expectError(await as(owner, "POST", "/api/v1/tenants/me/family-invites", body), 400, "invalid_request");
    }
    expectError(await as(owner, "POST", "/api/v1/tenants/me/family/remove-member", {}), 400, "invalid_request");
    expectError(await as(owner, "POST", "/api/v1/tenants/me/family/remove-member", { member_tenant_id: "tnt_unknown" }), 404, "not_found");
    // The token was never used by any of these.
    expect((await f.consume(token, "finally@example.com")).status).toBe(201);
  });

  it("replace-with-family is refused while the tenant pays for its own subscription", async () => {
    const f = await familyBackend(2);
    const payer = await f.b.tenant();
    const pro = await f.b.plan({ name: "Pro", slug: "pro", entitlements: { storage: 50 } });
    await devSubscribe(f.b, payer, pro.id);
    const invite = await f.invite();
    const refused = await f.as(payer, "POST", "/api/v1/tenants/me/replace-with-family", { token: invite.token });
    expectError(refused, 409, "conflict");
    expect(refused.body.message).toContain("subscription");
    expect((await f.as(f.owner, "GET", "/api/v1/tenants/me/family-invites")).body.invites[0].status).toBe("pending");
  });

  it("sign-up through the app's signup endpoint with a family invite joins the family", async () => {
    const f = await familyBackend(2);
    const invite = await f.invite();
    await f.t.backend.admin.updateApp(f.t.app.id, { settings: { signupMode: "invite_only" } });
    const res = await f.t.request("POST", "/api/v1/auth/signup", { key: f.t.app.publishableKey, body: { email: "via-signup@example.com", password: PASSWORD, inviteToken: invite.token } });
    const joined = tenantFrom(res, f.t.app.id);
    expect(claimsOf(joined.accessToken).pid).toBe(f.owner.id);
    expect(await f.view(joined)).toEqual({ entitlements: FAMILY, source: "family", familyOwnerEmail: f.owner.email });
  });
});
