// Organizations (docs/organizations.md): members with roles, invites by email and by link,
// seats, the last owner, privacy across organizations and apps, and the trail and webhooks.
import { describe, expect, it } from "vitest";
import { developerSession, expectError, serveHttp, buildRequest, toReply, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import { outboxFor } from "./_email.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";
import { clientBackend } from "./client-helpers.ts";
import { TenantdError } from "../src/client/index.ts";
import { runCommand } from "citty";
import { afterEach, vi } from "vitest";
import orgCommand from "../src/cli/org.ts";
import { cliStoreEnv, withCleanEnv } from "./_helpers.ts";
import { storeRows } from "./_store.ts";

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

/** Runs `tenantd org …` in-process on the backend's data directory; returns stdout. */
async function orgCli(dataDir: string, args: string[]): Promise<string> {
  const out: string[] = [];
  // A refusal prints `{ error, message }` and exits 1: the exit is stopped here, the output kept.
  vi.spyOn(process, "exit").mockImplementation(((code?: number) => {
    throw Object.assign(new Error(`exit ${code}`), { exited: true });
  }) as never);
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    const rawArgs = [...args, "--data-dir", dataDir];
    await withCleanEnv(() => runCommand(orgCommand, { rawArgs }), await cliStoreEnv(rawArgs)).catch((e: { exited?: boolean }) => {
      if (!e.exited) throw e;
    });
  } finally {
    spy.mockRestore();
  }
  return out.join("");
}

const PASSWORD = "correct horse battery";
const INVITE_URL = "https://app.example.com/join?t={token}";
const iso = (ms: number) => new Date(ms).toISOString();

async function orgsBackend(settings: Record<string, unknown> = {}, config: Parameters<typeof startBackend>[0] = {}) {
  const t = await startBackend(config);
  await t.backend.admin.updateApp(t.app.id, { settings: { orgs: { inviteUrl: INVITE_URL, ...settings } } });
  const as = (who: TestTenant, method: string, path: string, body?: unknown) => t.request(method, `/api/v1/orgs${path}`, { bearer: who.bearer, body });
  return {
    t,
    as,
    async create(owner: TestTenant, name = "Acme") {
      const res = await as(owner, "POST", "", { name });
      expect(res.status, res.text).toBe(201);
      return res.body.org as { id: string; name: string; role: string };
    },
    async invite(who: TestTenant, orgId: string, body: Record<string, unknown> = {}) {
      const res = await as(who, "POST", `/${orgId}/invites`, body);
      expect(res.status, res.text).toBe(201);
      return res.body.invite as { id: string; token: string; url: string | null };
    },
    accept: (who: TestTenant, token: string) => as(who, "POST", "/invites/accept", { token }),
    async join(who: TestTenant, orgId: string, by: TestTenant, role = "member") {
      const invite = await this.invite(by, orgId, { role });
      const res = await as(who, "POST", "/invites/accept", { token: invite.token });
      expect(res.status, res.text).toBe(200);
    },
    roles: async (who: TestTenant, orgId: string) =>
      Object.fromEntries(((await as(who, "GET", `/${orgId}/members?limit=200`)).body.members as { email: string; role: string }[]).map((m) => [m.email, m.role])),
  };
}

/** The default app given to a fresh developer, so its audit trail and webhook can be read. */
async function ownedApp(t: TestBackend) {
  const developer = await developerSession(t);
  await t.backend.admin.setAppOwner(t.app.id, (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.email);
  return developer;
}

describe("organizations: lifecycle", () => {
  it("create, invite by link and by email (es), members page by page, roles, rename, transfer, remove, delete; each change audited and sent as a webhook", async () => {
    const o = await orgsBackend({}, { webhooks: { allowInsecure: true } });
    const { t, as } = o;
    const developer = await ownedApp(t);
    const receiver = await startReceiver();
    await configureWebhook(t, developer, receiver.url);
    const alice = await signupTenant(t, { email: "alice@example.com" });
    const bob = await signupTenant(t, { email: "bob@example.com" });

    const created = await as(alice, "POST", "", { name: "  Acme  " });
    expect(created.status, created.text).toBe(201);
    const org = created.body.org;
    expect(org).toEqual({ id: expect.stringMatching(/^org_/), name: "Acme", kind: "team", role: "owner", createdAt: iso(t.clock()), updatedAt: iso(t.clock()) });
    expect((await as(alice, "GET", "")).body).toEqual({ orgs: [org] });
    expect((await as(bob, "GET", "")).body).toEqual({ orgs: [] });

    // A link invite: an existing tenant accepts it.
    t.clock.advance(1000);
    const link = await as(alice, "POST", `/${org.id}/invites`, {});
    expect(link.status, link.text).toBe(201);
    expect(link.body).toEqual({
      invite: {
        id: expect.stringMatching(/^oin_/), kind: "link", email: null, role: "member", status: "pending", uses: 0, createdAt: iso(t.clock()), expiresAt: iso(t.clock() + 7 * 86400_000),
        usedAt: null, usedByTenantId: null, token: expect.stringMatching(/^org_/), url: expect.stringMatching(/^https:\/\/app\.example\.com\/join\?t=org_/),
      },
      seats: { limit: null, used: 1, pending: 0, remaining: null },
    });
    const accepted = await o.accept(bob, link.body.invite.token);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toEqual({ org: { ...org, role: "member" } });

    // An email invite, in Spanish, to someone without an account: signing up with it joins.
    t.clock.advance(1000);
    const emailed = await o.invite(alice, org.id, { email: "Carol@Example.com", role: "admin", locale: "es" });
    const [mail] = await outboxFor(t, "carol@example.com");
    expect(mail).toMatchObject({ kind: "org_invite", locale: "es", subject: expect.stringMatching(/^Te invitan a unirte a Acme en /) });
    expect(mail!.text).toContain("alice@example.com te invitó a unirte a la organización Acme");
    expect(mail!.link).toBe(emailed.url);
    expect(mail!.html).toContain('<html lang="es">');
    expect(mail!.html).toContain(`href="${emailed.url!.replaceAll("&", "&amp;")}"`);
    expect(mail!.html).toContain("Aceptar la invitación");
    const token = new URL(mail!.link!).searchParams.get("t")!;
    expect(token).toBe(emailed.token);
    const signup = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "carol@example.com", password: PASSWORD, inviteToken: token } });
    expect(signup.status, signup.text).toBe(201);
    const carol: TestTenant = { id: signup.body.tenant.id, email: "carol@example.com", accessToken: signup.body.accessToken, refreshToken: signup.body.refreshToken, bearer: { accessToken: signup.body.accessToken, appId: t.app.id } };
    expect((await as(carol, "GET", "")).body.orgs).toEqual([{ ...org, role: "admin" }]);
    const invites = (await as(alice, "GET", `/${org.id}/invites`)).body;
    expect(invites.invites.map((i: Record<string, unknown>) => [i.kind, i.status, i.uses, i.usedByTenantId])).toEqual([["email", "used", 1, carol.id], ["link", "pending", 1, null]]);
    expect(JSON.stringify(invites)).not.toContain(token);

    // Members in join order, two a page.
    const first = await as(bob, "GET", `/${org.id}/members?limit=2`);
    expect(first.body.members).toEqual([
      { tenantId: alice.id, email: "alice@example.com", role: "owner", joinedAt: iso(t.clock() - 2000) },
      { tenantId: bob.id, email: "bob@example.com", role: "member", joinedAt: iso(t.clock() - 1000) },
    ]);
    const second = await as(bob, "GET", `/${org.id}/members?limit=2&after=${first.body.next}`);
    expect(second.body).toEqual({ members: [{ tenantId: carol.id, email: "carol@example.com", role: "admin", joinedAt: iso(t.clock()) }], next: null });

    // Roles: a member cannot rename; an admin can, and manages members, but not owners.
    expectError(await as(bob, "PATCH", `/${org.id}`, { name: "Bob's" }), 403, "forbidden");
    expect((await as(carol, "PATCH", `/${org.id}`, { name: "Acme Inc" })).body.org).toMatchObject({ name: "Acme Inc", role: "admin" });
    expectError(await as(carol, "PATCH", `/${org.id}/members/${alice.id}`, { role: "member" }), 403, "forbidden");
    expectError(await as(carol, "PATCH", `/${org.id}/members/${bob.id}`, { role: "owner" }), 403, "forbidden");
    expectError(await as(carol, "DELETE", `/${org.id}`), 403, "forbidden");
    expect((await as(carol, "PATCH", `/${org.id}/members/${bob.id}`, { role: "admin" })).body).toEqual({ member: { tenantId: bob.id, email: "bob@example.com", role: "admin", joinedAt: iso(t.clock() - 1000) } });

    // The last owner cannot leave nor step down; a transfer makes bob owner and alice admin.
    expectError(await as(alice, "POST", `/${org.id}/leave`), 409, "conflict");
    expectError(await as(alice, "PATCH", `/${org.id}/members/${alice.id}`, { role: "admin" }), 409, "conflict");
    expectError(await as(alice, "POST", `/${org.id}/transfer`, { tenantId: "tnt_nobody" }), 404, "not_found");
    expect((await as(alice, "POST", `/${org.id}/transfer`, { tenantId: bob.id })).body.org).toMatchObject({ role: "admin" });
    expect(await o.roles(bob, org.id)).toEqual({ "alice@example.com": "admin", "bob@example.com": "owner", "carol@example.com": "admin" });
    expectError(await as(alice, "POST", `/${org.id}/transfer`, { tenantId: carol.id }), 403, "forbidden");

    // Remove and leave; then the owner deletes the organization.
    expectError(await as(carol, "DELETE", `/${org.id}/members/${bob.id}`), 403, "forbidden");
    expect((await as(bob, "DELETE", `/${org.id}/members/${carol.id}`)).status).toBe(204);
    expectError(await as(carol, "GET", `/${org.id}`), 404, "not_found");
    expect((await as(alice, "POST", `/${org.id}/leave`)).status).toBe(204);
    expect((await as(bob, "DELETE", `/${org.id}`)).status).toBe(204);
    expectError(await as(bob, "GET", `/${org.id}`), 404, "not_found");
    expect((await as(bob, "GET", "")).body).toEqual({ orgs: [] });

    const events = [
      "org.created", "org.invite.created", "org.member.added", "org.invite.created", "org.member.added", "org.updated", "org.member.role_changed",
      "org.ownership_transferred", "org.member.removed", "org.member.removed", "org.deleted",
    ];
    const trail = (await t.request("GET", `/api/v1/admin/apps/${t.app.id}/audit?action=org.*&limit=100`, { developer })).body.entries as Record<string, any>[];
    expect(trail.map((e) => e.action).reverse()).toEqual(events);
    expect(trail.every((e) => e.target === org.id)).toBe(true);
    expect(trail.find((e) => e.action === "org.member.removed" && e.details.reason === "left")).toMatchObject({ actor: { type: "tenant", id: alice.id }, tenantId: alice.id });
    // The developer's view: every organization of the app, and one with its members.
    const appOrgs = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/orgs`, { developer });
    expect(appOrgs.body).toEqual({ orgs: [], total: 0, limit: 50, offset: 0 });
    const sent = (await finishedDeliveries(t, developer, events.length)).map((d) => d.event).filter((e: string) => e.startsWith("org.")).reverse();
    expect(sent).toEqual(events);
    const added = receiver.received.map((r) => JSON.parse(r.raw.toString())).find((b) => b.event === "org.member.added" && b.tenantId === carol.id);
    expect(added).toMatchObject({ email: "carol@example.com", payload: { orgId: org.id, role: "admin", via: "signup" } });
  });

  it("custom roles: named permissions decide what a member may do, and whom it may touch", async () => {
    const o = await orgsBackend({ roles: { recruiter: { permissions: ["members.invite", "records.read"] }, editor: { permissions: ["records.read", "records.write"] } } });
    const { t, as } = o;
    const [owner, rec, ed, newbie] = await Promise.all([1, 2, 3, 4].map(() => signupTenant(t)));
    const org = await o.create(owner!);
    await o.join(rec!, org.id, owner!, "recruiter");
    await o.join(ed!, org.id, owner!, "editor");
    // The recruiter invites members and its own role, not an editor (it cannot write records) nor an admin.
    await o.invite(rec!, org.id, {});
    await o.invite(rec!, org.id, { role: "recruiter" });
    expectError(await as(rec!, "POST", `/${org.id}/invites`, { role: "editor" }), 403, "forbidden");
    expectError(await as(rec!, "POST", `/${org.id}/invites`, { role: "admin" }), 403, "forbidden");
    expectError(await as(rec!, "PATCH", `/${org.id}/members/${ed!.id}`, { role: "member" }), 403, "forbidden");
    expectError(await as(ed!, "POST", `/${org.id}/invites`, {}), 403, "forbidden");
    expectError(await as(ed!, "GET", `/${org.id}/invites`), 403, "forbidden");
    const unknown = await as(owner!, "POST", `/${org.id}/invites`, { role: "janitor" });
    expectError(unknown, 400, "invalid_request");
    expect(unknown.body.message).toContain("recruiter, editor");
    const byRecruiter = await o.invite(rec!, org.id, {});
    expect((await o.accept(newbie!, byRecruiter.token)).body.org.role).toBe("member");
    // The settings refuse a custom role named like a built-in one, or an unknown permission.
    for (const roles of [{ admin: { permissions: [] } }, { x: { permissions: ["org.delete"] } }, { "Bad Name": { permissions: [] } }]) {
      await expect(t.backend.admin.updateApp(t.app.id, { settings: { orgs: { roles } } })).rejects.toThrow();
    }
  });
});

describe("organizations: bad input", () => {
  it("answers 404 for another's organization or another app's, 403 above one's role, and refuses bad invites", async () => {
    const o = await orgsBackend({ seats: 3 });
    const { t, as } = o;
    const [alice, bob, mallory] = await Promise.all([1, 2, 3].map(() => signupTenant(t)));
    const org = await o.create(alice!);
    const other = await t.backend.admin.createApp({ name: "other" });
    const stranger = await signupTenant(t, { key: other.publishableKey, appId: other.id });
    for (const who of [mallory!, stranger]) {
      for (const [method, path, body] of [
        ["GET", `/${org.id}`], ["PATCH", `/${org.id}`, { name: "x" }], ["DELETE", `/${org.id}`], ["GET", `/${org.id}/members`], ["POST", `/${org.id}/invites`, {}],
        ["GET", `/${org.id}/invites`], ["PATCH", `/${org.id}/members/${alice!.id}`, { role: "member" }], ["DELETE", `/${org.id}/members/${alice!.id}`],
        ["POST", `/${org.id}/transfer`, { tenantId: who.id }], ["POST", `/${org.id}/leave`],
      ] as const) {
        expectError(await as(who, method, path, body), 404, "not_found");
      }
    }
    expect(await o.roles(alice!, org.id)).toEqual({ [alice!.email]: "owner" });

    // Bodies and queries.
    expectError(await as(alice!, "POST", "", { name: "   " }), 400, "invalid_request");
    expectError(await as(alice!, "POST", "", { name: "x".repeat(201) }), 400, "invalid_request");
    expectError(await as(alice!, "POST", "", []), 400, "invalid_request");
    expectError(await as(alice!, "GET", `/${org.id}/members?limit=0`), 400, "invalid_request");
    expectError(await as(alice!, "GET", `/${org.id}/members?after=nonsense`), 400, "invalid_cursor");
    expectError(await as(alice!, "POST", `/${org.id}/invites`, { email: "not an email" }), 400, "invalid_request");
    expectError(await as(alice!, "POST", `/${org.id}/invites`, { expiresInSeconds: 0 }), 400, "invalid_request");
    expectError(await as(alice!, "PATCH", `/${org.id}/members/${alice!.id}`, { role: "" }), 400, "invalid_request");

    // An invite of another app, an unknown one, an expired one, one for another address, one used up.
    const link = await o.invite(alice!, org.id, { expiresInSeconds: 60 });
    expectError(await o.accept(stranger, link.token), 400, "invalid_token");
    expectError(await o.accept(bob!, "org_madeup"), 400, "invalid_token");
    const forCarol = await o.invite(alice!, org.id, { email: "carol@example.com" });
    const wrong = await o.accept(bob!, forCarol.token);
    expectError(wrong, 403, "forbidden");
    expect(wrong.body.message).toContain("another email address");
    expect((await o.accept(bob!, link.token)).status).toBe(200);
    expectError(await o.accept(bob!, link.token), 409, "conflict");
    t.clock.advance(61_000);
    expectError(await o.accept(mallory!, link.token), 400, "invalid_token");
    const carolSignup = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "carol@example.com", password: PASSWORD, inviteToken: forCarol.token } });
    expect(carolSignup.status, carolSignup.text).toBe(201);
    expectError(await o.accept(mallory!, forCarol.token), 400, "invalid_token");
    // A revoked invite is gone; a used email invite stays as the record.
    const revoked = await o.invite(alice!, org.id, {});
    expect((await as(alice!, "DELETE", `/${org.id}/invites/${revoked.id}`)).status).toBe(204);
    expectError(await o.accept(mallory!, revoked.token), 400, "invalid_token");
    expectError(await as(alice!, "DELETE", `/${org.id}/invites/${forCarol.id}`), 409, "conflict");
    expectError(await as(alice!, "DELETE", `/${org.id}/invites/oin_nothing`), 404, "not_found");

    // Seats: three, all taken now (alice, bob, carol): a new email invite and a link both refuse.
    expect((await as(alice!, "GET", `/${org.id}/invites`)).body.seats).toEqual({ limit: 3, used: 3, pending: 0, remaining: 0 });
    expectError(await as(alice!, "POST", `/${org.id}/invites`, { email: "dave@example.com" }), 409, "seats_full");
    const late = await o.invite(alice!, org.id, {});
    expectError(await o.accept(mallory!, late.token), 409, "seats_full");
    // A sign-up through a full organization's link creates no account.
    const refused = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "eve@example.com", password: PASSWORD, inviteToken: late.token } });
    expectError(refused, 409, "seats_full");
    expectError(await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: "eve@example.com", password: PASSWORD } }), 401, "invalid_credentials");
  });

  it("a tenant owns at most settings.orgs.maxOwnedPerTenant organizations, also when it creates them all at once", async () => {
    const o = await orgsBackend({ maxOwnedPerTenant: 2 });
    const { t } = o;
    const { url } = await serveHttp(t.backend);
    const [alice, bob] = [await signupTenant(t), await signupTenant(t)];
    const replies = await Promise.all(Array.from({ length: 5 }, (_, i) => fetch(buildRequest(url, "POST", "/api/v1/orgs", { bearer: alice.bearer, body: { name: `Org ${i}` } })).then(toReply)));
    expect(replies.filter((r) => r.status === 201).length).toBe(2);
    for (const r of replies.filter((x) => x.status !== 201)) expectError(r, 402, "limit_reached");
    const [first] = (await o.as(alice, "GET", "")).body.orgs as { id: string }[];
    // Handing one over frees a place; memberships of others' organizations never count.
    await o.join(bob, first!.id, alice);
    await o.as(alice, "POST", `/${first!.id}/transfer`, { tenantId: bob.id });
    await o.create(alice, "Third");
    expectError(await o.as(alice, "POST", "", { name: "Fourth" }), 402, "limit_reached");
    await t.backend.admin.updateApp(t.app.id, { settings: { orgs: { maxOwnedPerTenant: null } } });
    await o.create(alice, "Fourth");
  });

  it("an email invite needs the app's invite page; an app that sends its own email gets the token alone", async () => {
    const t = await startBackend();
    const alice = await signupTenant(t);
    const org = (await t.request("POST", "/api/v1/orgs", { bearer: alice.bearer, body: { name: "A" } })).body.org;
    const res = await t.request("POST", `/api/v1/orgs/${org.id}/invites`, { bearer: alice.bearer, body: { email: "x@example.com" } });
    expectError(res, 400, "invalid_request");
    expect(res.body.message).toContain("settings.orgs.inviteUrl");
    await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
    const quiet = await t.request("POST", `/api/v1/orgs/${org.id}/invites`, { bearer: alice.bearer, body: { email: "x@example.com" } });
    expect(quiet.status, quiet.text).toBe(201);
    expect(quiet.body.invite).toMatchObject({ kind: "email", email: "x@example.com", token: expect.stringMatching(/^org_/), url: null });
    expect(await outboxFor(t, "x@example.com")).toEqual([]);
  });

  it("an account's deletion hands its organizations to the earliest admin, else member; one it was alone in goes", async () => {
    const o = await orgsBackend();
    const { t, as } = o;
    const [alice, bob, carol] = await Promise.all([1, 2, 3].map(() => signupTenant(t)));
    const shared = await o.create(alice!, "Shared");
    const alone = await o.create(alice!, "Alone");
    await o.join(bob!, shared.id, alice!);
    t.clock.advance(1000);
    await o.join(carol!, shared.id, alice!, "admin");
    // Alice also invited (a pending email invite, a link) and joined Bob's organization by email.
    await o.invite(alice!, shared.id, { email: "someone@example.com" });
    const bobs = await o.create(bob!, "Bob's");
    await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
    const forAlice = await o.invite(bob!, bobs.id, { email: alice!.email });
    expect((await o.accept(alice!, forAlice.token)).status).toBe(200);
    expect((await t.request("POST", "/api/v1/tenants/me/delete", { bearer: alice!.bearer })).status).toBe(200);
    const rows = storeRows(t.backend);
    expect(await rows.value("SELECT COUNT(*) FROM org_members WHERE tenant_id = ?", alice!.id)).toBe(0);
    expect(await rows.value("SELECT COUNT(*) FROM org_invites WHERE created_by = ? OR used_by_tenant_id = ?", alice!.id, alice!.id)).toBe(0);
    expect(await o.roles(bob!, bobs.id)).toEqual({ [bob!.email]: "owner" });
    expect(await o.roles(bob!, shared.id)).toEqual({ [bob!.email]: "member", [carol!.email]: "owner" });
    expect((await as(carol!, "GET", "")).body.orgs.map((x: { name: string }) => x.name)).toEqual(["Shared"]);
    expect((await t.backend.core.db.orgs.forTenant(t.app.id, alice!.id)).length).toBe(0);
    expect(await t.backend.core.db.orgs.asMember(t.app.id, alone.id, carol!.id)).toBeUndefined();
  });
});

describe("organizations: concurrency", () => {
  it("concurrent accepts and sign-ups through one link past the seat count: exactly the free seats fill, nothing partial", async () => {
    const o = await orgsBackend({ seats: 4 });
    const { t } = o;
    const { url } = await serveHttp(t.backend);
    const owner = await signupTenant(t);
    const org = await o.create(owner);
    const link = await o.invite(owner, org.id, {});
    const tenants = await Promise.all(Array.from({ length: 6 }, () => signupTenant(t)));
    const post = async (path: string, opts: Parameters<typeof buildRequest>[3]) => toReply(await fetch(buildRequest(url, "POST", path, opts)));
    const emails = Array.from({ length: 6 }, (_, i) => `racer${i}-${Math.random().toString(36).slice(2, 8)}@example.com`);
    const replies = await Promise.all([
      ...tenants.map((who) => post("/api/v1/orgs/invites/accept", { bearer: who.bearer, body: { token: link.token } })),
      ...emails.map((email) => post("/api/v1/auth/signup", { key: t.app.publishableKey, body: { email, password: PASSWORD, inviteToken: link.token } })),
    ]);
    const won = replies.filter((r) => r.status === 200 || r.status === 201);
    expect(won.length).toBe(3);
    for (const r of replies.filter((x) => !won.includes(x))) expectError(r, 409, "seats_full");
    const members = (await o.as(owner, "GET", `/${org.id}/members?limit=200`)).body.members;
    expect(members.length).toBe(4);
    expect((await o.as(owner, "GET", `/${org.id}/invites`)).body).toMatchObject({ invites: [{ uses: 3 }], seats: { limit: 4, used: 4, pending: 0, remaining: 0 } });
    // A refused sign-up left no account behind; a winning one is a member.
    for (const [i, email] of emails.entries()) {
      const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email, password: PASSWORD } });
      const signedUp = replies[tenants.length + i]!.status === 201;
      expect(login.status).toBe(signedUp ? 200 : 401);
      if (signedUp) expect(members.map((m: { email: string }) => m.email)).toContain(email);
    }
  });

  it("a role change decided on roles that changed meanwhile is refused: an admin cannot demote someone made owner in between", async () => {
    const o = await orgsBackend();
    const { t } = o;
    const [owner, admin, x] = [await signupTenant(t), await signupTenant(t), await signupTenant(t)];
    const org = await o.create(owner);
    await o.join(admin, org.id, owner, "admin");
    await o.join(x, org.id, owner);
    const orgs = t.backend.core.db.orgs;
    // The admin read x as a member; the owner makes x an owner before the admin's change lands.
    const decidedOn = [{ tenantId: admin.id, role: "admin" }, { tenantId: x.id, role: "member" }];
    expect(await orgs.setRole(t.app.id, org.id, x.id, "owner")).toBe("changed");
    expect(await orgs.setRole(t.app.id, org.id, x.id, "admin", decidedOn)).toBe("stale");
    expect(await orgs.removeMember(t.app.id, org.id, x.id, decidedOn)).toBe("stale");
    expect(await o.roles(owner, org.id)).toMatchObject({ [x.email]: "owner" });
    // Checks that still hold let the change through.
    expect(await orgs.setRole(t.app.id, org.id, x.id, "member", [{ tenantId: x.id, role: "owner" }])).toBe("changed");
  });

  it("two owners demoting each other at once: one stays owner", async () => {
    const o = await orgsBackend();
    const { t } = o;
    const { url } = await serveHttp(t.backend);
    const [a, b] = await Promise.all([signupTenant(t), signupTenant(t)]);
    const org = await o.create(a!);
    await o.join(b!, org.id, a!, "owner");
    const demote = async (who: TestTenant, target: TestTenant) =>
      toReply(await fetch(buildRequest(url, "PATCH", `/api/v1/orgs/${org.id}/members/${target.id}`, { bearer: who.bearer, body: { role: "member" } })));
    const replies = await Promise.all([demote(a!, a!), demote(b!, b!), demote(a!, b!), demote(b!, a!)]);
    expect(replies.map((r) => r.status).sort()).toContain(409);
    const roles = Object.values(await o.roles(a!, org.id));
    expect(roles.filter((r) => r === "owner").length).toBe(1);
  });
});

describe("tenantd/client orgs", () => {
  it("one method per endpoint: create, invite, accept (and sign up with an invite), page members, roles, transfer, leave, delete", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
    const owner = client();
    await owner.auth.signUp({ email: "owner@example.com", password: PASSWORD });
    const org = await owner.orgs.create("Acme");
    expect(org).toMatchObject({ name: "Acme", role: "owner", kind: "team" });
    expect(await owner.orgs.list()).toEqual([org]);
    expect(await owner.orgs.rename(org.id, "Acme Inc")).toMatchObject({ name: "Acme Inc" });

    const link = await owner.orgs.invite(org.id, { role: "admin" });
    const emailed = await owner.orgs.invite(org.id, { email: "new@example.com" });
    const joiner = client();
    await joiner.auth.signUp({ email: "joiner@example.com", password: PASSWORD });
    t.clock.advance(1000);
    expect(await joiner.orgs.accept(link.invite.token)).toMatchObject({ id: org.id, role: "admin" });
    const newcomer = client();
    t.clock.advance(1000);
    await newcomer.auth.signUp({ email: "new@example.com", password: PASSWORD, inviteToken: emailed.invite.token });
    expect((await newcomer.orgs.get(org.id)).role).toBe("member");
    expect((await owner.orgs.invites(org.id)).seats).toEqual({ limit: null, used: 3, pending: 0, remaining: null });
    await owner.orgs.revokeInvite(org.id, link.invite.id);

    const page = await owner.orgs.members(org.id, { limit: 2 });
    expect(page.members.map((m) => m.email)).toEqual(["owner@example.com", "joiner@example.com"]);
    expect((await owner.orgs.members(org.id, { after: page.next! })).members.map((m) => m.email)).toEqual(["new@example.com"]);
    const newId = (await newcomer.auth.getSession())!.tenant!.id;
    expect(await owner.orgs.setRole(org.id, newId, "admin")).toMatchObject({ email: "new@example.com", role: "admin" });
    const refused = await newcomer.orgs.delete(org.id).then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(TenantdError);
    expect(refused).toMatchObject({ status: 403, code: "forbidden" });
    const joinerId = (await joiner.auth.getSession())!.tenant!.id;
    expect(await owner.orgs.transfer(org.id, joinerId)).toMatchObject({ role: "admin" });
    await joiner.orgs.removeMember(org.id, newId);
    await owner.orgs.leave(org.id);
    await joiner.orgs.delete(org.id);
    expect(await joiner.orgs.list()).toEqual([]);
  });
});

describe("tenantd org (CLI)", () => {
  it("lists an app's organizations and one tenant's, shows one with its members, deletes one as the operator", async () => {
    const o = await orgsBackend();
    const { t } = o;
    const [alice, bob] = [await signupTenant(t, { email: "alice@example.com" }), await signupTenant(t, { email: "bob@example.com" })];
    const acme = await o.create(alice, "Acme");
    t.clock.advance(1000);
    const solo = await o.create(bob, "Solo");
    t.clock.advance(1000);
    await o.join(bob, acme.id, alice, "admin");
    const json = async (args: string[]) => JSON.parse(await orgCli(t.dataDir, [...args, "--app", t.app.id, "--json"]));
    expect(await json(["list"])).toEqual({
      orgs: [
        { id: solo.id, name: "Solo", kind: "team", createdAt: expect.any(String), updatedAt: expect.any(String), members: 1 },
        { id: acme.id, name: "Acme", kind: "team", createdAt: expect.any(String), updatedAt: expect.any(String), members: 2 },
      ],
      total: 2,
    });
    expect((await json(["list", "--tenant", "bob@example.com"])).orgs.map((x: { name: string; role: string }) => [x.name, x.role])).toEqual([["Acme", "admin"], ["Solo", "owner"]]);
    const developer = await ownedApp(t);
    const viaApi = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/orgs/${acme.id}?limit=1`, { developer });
    expect((await t.request("GET", `/api/v1/admin/apps/${t.app.id}/orgs?limit=1&offset=1`, { developer })).body).toMatchObject({ orgs: [{ id: acme.id, members: 2 }], total: 2 });
    // The first page carries the invites (here the link bob joined with) and the seats.
    expect(viaApi.body).toEqual({
      org: { id: acme.id, name: "Acme", kind: "team", createdAt: expect.any(String), updatedAt: expect.any(String) },
      members: [expect.objectContaining({ email: "alice@example.com", role: "owner" })],
      next: expect.any(String),
      invites: [expect.objectContaining({ kind: "link", email: null, role: "admin", status: "pending", uses: 1 })],
      seats: { limit: null, used: 2, pending: 0, remaining: null },
    });
    const later = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/orgs/${acme.id}?limit=1&after=${viaApi.body.next}`, { developer });
    expect(later.body).toEqual({ org: expect.objectContaining({ id: acme.id }), members: [expect.objectContaining({ email: "bob@example.com", role: "admin" })], next: null });
    expect((await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants/bob%40example.com/orgs`, { developer })).body.orgs.map((x: { name: string; role: string }) => [x.name, x.role]).sort()).toEqual([["Acme", "admin"], ["Solo", "owner"]]);
    // Another developer can neither read nor delete the app's organizations.
    const stranger = await developerSession(t);
    expectError(await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/orgs/${solo.id}`, { developer: stranger }), 404, "not_found");
    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants/${bob.id}/orgs`, { developer: stranger }), 404, "not_found");
    expect((await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/orgs/${solo.id}`, { developer })).status).toBe(204);
    expectError(await o.as(bob, "GET", `/${solo.id}`), 404, "not_found");

    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/orgs/${acme.id}`, { developer: await developerSession(t) }), 404, "not_found");
    expect((await json(["show", acme.id])).members.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([["alice@example.com", "owner"], ["bob@example.com", "admin"]]);
    expect(await orgCli(t.dataDir, ["show", acme.id, "--app", t.app.id])).toContain("alice@example.com");
    expect((await json(["delete", acme.id])).error).toBe("invalid_request");
    expect(await json(["delete", acme.id, "--yes"])).toEqual({ deleted: true, orgId: acme.id });
    expectError(await o.as(alice, "GET", `/${acme.id}`), 404, "not_found");
    expect((await json(["show", acme.id])).message).toContain("No organization");
  });
});

describe("organizations: a large one", () => {
  it("10,000 members page through by cursor: each once, in join order", async () => {
    const o = await orgsBackend();
    const { t } = o;
    const owner = await signupTenant(t);
    const org = await o.create(owner);
    // Seeded in SQL both engines speak: 10,000 tenants, each joined one millisecond after the last.
    const rows = storeRows(t.backend);
    const start = t.clock() + 1;
    await rows.run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
       INSERT INTO tenants (id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at)
       SELECT 'tnt_bulk' || i, ?, 'bulk' || i || '@example.com', NULL, NULL, 'en', NULL, CAST(? AS BIGINT) FROM n`,
      t.app.id, start,
    );
    await rows.run(
      `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 10000)
       INSERT INTO org_members (org_id, tenant_id, app_id, role, joined_at) SELECT ?, 'tnt_bulk' || i, ?, 'member', CAST(? AS BIGINT) + i FROM n`,
      org.id, t.app.id, start,
    );
    const seen: string[] = [];
    let after: string | null = null;
    do {
      const page = await o.as(owner, "GET", `/${org.id}/members?limit=200${after ? `&after=${after}` : ""}`);
      expect(page.status, page.text).toBe(200);
      seen.push(...page.body.members.map((m: { tenantId: string }) => m.tenantId));
      after = page.body.next;
    } while (after);
    expect(seen.length).toBe(10_001);
    expect(seen.slice(0, 3)).toEqual([owner.id, "tnt_bulk1", "tnt_bulk2"]);
    expect(seen.at(-1)).toBe("tnt_bulk10000");
    expect(new Set(seen).size).toBe(10_001);
  });
});
