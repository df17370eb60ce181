// Organization records (docs/organizations.md#organization-records): a collection declared
// `org` holds records that belong to an organization, read and written by its members per role
// through /api/v1/orgs/{orgId}/collections/{collection}/records, the same routes as a
// tenant's own records. Privacy: no record crosses organizations or apps.
import { createPlan } from "../src/billing/plans.ts";
import { grantOrg } from "../src/orgs/billing.ts";
import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend, type ReqOptions, type TestBackend, type TestTenant } from "./_helpers.ts";
import { dataClient, listPath, type ListParams } from "./data-helpers.ts";
import { clientBackend, PASSWORD } from "./client-helpers.ts";
import { TenantdError } from "../src/client/index.ts";

type Collections = Record<string, Record<string, unknown>>;

const ORG_COLLECTIONS: Collections = {
  tasks: { org: true, unique: ["code"], indexed: ["n"], search: { language: "en" } },
  notes: { unique: ["code"], indexed: ["n"], search: { language: "en" } },
  board: { org: { write: "members" } },
};

/** A backend whose default app has organization collections, an owner with an organization, and helpers. */
async function orgRecordsBackend(settings: Record<string, unknown> = {}, collections: Collections = ORG_COLLECTIONS) {
  const t = await startBackend();
  await t.backend.admin.updateApp(t.app.id, { settings: { collections, ...settings } });
  const orgsApi = (who: TestTenant, method: string, path: string, body?: unknown) => t.request(method, `/api/v1/orgs${path}`, { bearer: who.bearer, body });
  const create = async (owner: TestTenant, name = "Acme") => {
    const res = await orgsApi(owner, "POST", "", { name });
    expect(res.status, res.text).toBe(201);
    return res.body.org.id as string;
  };
  const join = async (who: TestTenant, orgId: string, by: TestTenant, role = "member") => {
    const invite = await orgsApi(by, "POST", `/${orgId}/invites`, { role });
    expect(invite.status, invite.text).toBe(201);
    const res = await orgsApi(who, "POST", "/invites/accept", { token: invite.body.invite.token });
    expect(res.status, res.text).toBe(200);
  };
  return { t, orgsApi, create, join };
}

/** The org record routes as one member calls them: the same surface as dataClient. */
function orgClient(t: TestBackend, who: { bearer: TestTenant["bearer"] }, orgId: string) {
  const base = `/api/v1/orgs/${orgId}/collections`;
  const send = (method: string, path: string, opts: ReqOptions = {}) => t.request(method, path, { bearer: who.bearer, ...opts });
  return {
    create: (collection: string, data: unknown) => send("POST", `${base}/${collection}/records`, { body: { data } }),
    list: (collection: string, params?: ListParams) => send("GET", listPath(collection, params).replace(`/api/v1/data/${collection}`, `${base}/${collection}/records`)),
    get: (collection: string, id: string) => send("GET", `${base}/${collection}/records/${id}`),
    update: (collection: string, id: string, data: unknown) => send("PUT", `${base}/${collection}/records/${id}`, { body: { data } }),
    remove: (collection: string, id: string) => send("DELETE", `${base}/${collection}/records/${id}`),
    upsert: (collection: string, data: unknown) => send("POST", `${base}/${collection}/records/upsert`, { body: { data } }),
    share: (collection: string, id: string, body: unknown = {}) => send("POST", `${base}/${collection}/records/${id}/share`, { body }),
    revoke: (collection: string, id: string) => send("DELETE", `${base}/${collection}/records/${id}/share`),
    batch: (operations: unknown[]) => send("POST", `/api/v1/orgs/${orgId}/batch`, { body: { operations } }),
  };
}

const dataOf = (res: { body: { records: { data: unknown }[] } }) => res.body.records.map((r) => r.data);

describe("organization records", () => {
  it("members share one organization's records: create, get, list, merge-patch, upsert, delete, batch, share links", async () => {
    const { t, create, join } = await orgRecordsBackend();
    const [alice, bob] = await Promise.all([signupTenant(t), signupTenant(t)]);
    const orgId = await create(alice!);
    await join(bob!, orgId, alice!, "admin");
    const a = orgClient(t, alice!, orgId);
    const b = orgClient(t, bob!, orgId);

    const made = await a.create("tasks", { code: "T1", title: "Ship it", n: 1, tags: { a: 1 } });
    expect(made.status, made.text).toBe(201);
    const id = made.body.record.id as string;
    expect(made.body.record).toEqual({ id: expect.stringMatching(/^rec_/), data: { code: "T1", title: "Ship it", n: 1, tags: { a: 1 } }, createdAt: expect.any(String), updatedAt: expect.any(String) });
    // Bob, another member, reads and writes the same record.
    expect((await b.get("tasks", id)).body.record).toEqual(made.body.record);
    t.clock.advance(1000);
    const patched = await b.update("tasks", id, { title: "Shipped", tags: { a: null, b: 2 } });
    expect(patched.status, patched.text).toBe(200);
    expect(patched.body.record.data).toEqual({ code: "T1", title: "Shipped", n: 1, tags: { b: 2 } });
    // Upsert on the unique field: the same record merged, then a new one.
    const merged = await a.upsert("tasks", { code: "T1", n: 5 });
    expect([merged.status, merged.body.created, merged.body.record.id, merged.body.record.data.n]).toEqual([200, false, id, 5]);
    const fresh = await a.upsert("tasks", { code: "T2", title: "Write docs", n: 2 });
    expect([fresh.status, fresh.body.created]).toEqual([201, true]);
    expectError(await b.create("tasks", { code: "T2" }), 409, "conflict");
    const listed = await b.list("tasks", { sort: { n: 1 } });
    expect(listed.body).toMatchObject({ total: 2, limit: 50, offset: 0 });
    expect(dataOf(listed).map((d) => (d as { code: string }).code)).toEqual(["T2", "T1"]);

    // A batch: every operation in the organization's records, in one transaction.
    const batch = await a.batch([
      { op: "create", collection: "tasks", data: { code: "T3", n: 3 } },
      { op: "update", collection: "tasks", id, data: { done: true } },
    ]);
    expect(batch.status, batch.text).toBe(200);
    expect((await b.get("tasks", id)).body.record.data.done).toBe(true);
    expect((await a.list("tasks")).body.total).toBe(3);

    // Share links: made by one member, revoked by another.
    const shared = await a.share("tasks", id, { expiresInSeconds: 60 });
    expect(shared.status, shared.text).toBe(201);
    const pub = await t.request("GET", `/api/v1/public/shared/${shared.body.shareToken.token}`);
    expect(pub.body.record.data.code).toBe("T1");
    expect((await b.revoke("tasks", id)).body).toEqual({ revoked: 1 });
    expectError(await t.request("GET", `/api/v1/public/shared/${shared.body.shareToken.token}`), 404, "not_found");

    expect((await b.remove("tasks", id)).status).toBe(204);
    expectError(await a.get("tasks", id), 404, "not_found");
    expect((await a.list("tasks")).body.total).toBe(2);
  });

  it("lists exactly as tenant records do: filters, sort, offset, cursor pages, totals, $text", async () => {
    const { t, create } = await orgRecordsBackend();
    const alice = await signupTenant(t);
    const orgId = await create(alice);
    const org = orgClient(t, alice, orgId);
    const own = dataClient(t, alice);
    const words = ["coffee beans", "green tea", "the best coffee", "water", "roasted beans", "black tea", "espresso", "milk"];
    for (let i = 0; i < 24; i++) {
      const data = { code: `c${i}`, n: i % 7, title: words[i % words.length], nested: { even: i % 2 === 0 }, ...(i % 5 === 0 ? { maybe: null } : {}) };
      expect((await org.create("tasks", data)).status).toBe(201);
      expect((await own.create("notes", data)).status).toBe(201);
      t.clock.advance(1000);
    }
    const cases: ListParams[] = [
      {},
      { filter: { n: { $gte: 3 } }, sort: { n: -1 } },
      { filter: { "nested.even": true }, sort: { n: -1, code: 1 }, limit: 4 },
      { filter: { n: { $in: [1, 5, 6] } }, offset: 2, limit: 3 },
      { filter: { maybe: null } },
      { filter: { title: { $ne: "water" }, $createdAt: { $gte: "2026-01-15T12:00:05.000Z" } } },
      { filter: { $text: { $search: "coffee" } } },
      { filter: { $text: { $search: "beans tea" } }, limit: 2 },
      { sort: { code: 1 }, limit: 5, offset: 20 },
    ];
    for (const params of cases) {
      const [a, b] = [await org.list("tasks", params), await own.list("notes", params)];
      expect([a.status, b.status], `${JSON.stringify(params)}: ${a.text}`).toEqual([200, 200]);
      expect({ data: dataOf(a), total: a.body.total, limit: a.body.limit, offset: a.body.offset, next: a.body.next === undefined }).toEqual({
        data: dataOf(b), total: b.body.total, limit: b.body.limit, offset: b.body.offset, next: b.body.next === undefined,
      });
    }
    // Cursor pages walk the same records in the same order.
    const walk = async (list: (p: ListParams) => Promise<{ body: { records: { data: unknown }[]; next?: string } }>) => {
      const seen: unknown[] = [];
      for (let after: string | undefined, pages = 0; pages < 20; pages++) {
        const page = await list({ sort: { n: 1 }, limit: 5, filter: { n: { $gt: 0 } }, ...(after ? { after } : {}) });
        seen.push(...page.body.records.map((r) => r.data));
        if (!(after = page.body.next)) break;
      }
      return seen;
    };
    const orgWalk = await walk((p) => org.list("tasks", p));
    expect(orgWalk).toEqual(await walk((p) => own.list("notes", p)));
    expect(orgWalk.length).toBe(20);
    // A tenant cursor does not open an organization's list, nor the reverse.
    const tenantNext = (await own.list("notes", { limit: 5 })).body.next as string;
    expectError(await org.list("tasks", { limit: 5, after: tenantNext }), 400, "invalid_cursor");
  });
});

describe("organization records: who may do what", () => {
  it("reads need records.read, writes records.write (or any member where the collection says so); 403 names the permission", async () => {
    const { t, create, join } = await orgRecordsBackend({ orgs: { roles: { viewer: { permissions: ["records.read"] }, outsider: { permissions: [] } } } });
    const [owner, member, viewer, outsider] = await Promise.all([1, 2, 3, 4].map(() => signupTenant(t)));
    const orgId = await create(owner!);
    await join(member!, orgId, owner!, "member");
    await join(viewer!, orgId, owner!, "viewer");
    await join(outsider!, orgId, owner!, "outsider");
    const o = orgClient(t, owner!, orgId);
    const id = (await o.create("tasks", { code: "A" })).body.record.id as string;

    const m = orgClient(t, member!, orgId);
    expect((await m.get("tasks", id)).status).toBe(200);
    expect((await m.list("tasks")).body.total).toBe(1);
    for (const res of [
      await m.create("tasks", { code: "B" }),
      await m.update("tasks", id, { x: 1 }),
      await m.upsert("tasks", { code: "A", x: 1 }),
      await m.remove("tasks", id),
      await m.share("tasks", id),
      await m.revoke("tasks", id),
      await m.batch([{ op: "create", collection: "tasks", data: { code: "C" } }]),
    ]) {
      expectError(res, 403, "forbidden");
      expect(res.body.message).toContain("records.write");
    }
    // `board` lets every member write; reading still needs records.read.
    expect((await m.create("board", { note: "hi" })).status).toBe(201);
    expect((await orgClient(t, viewer!, orgId).create("board", { note: "me too" })).status).toBe(201);
    const none = orgClient(t, outsider!, orgId);
    const refused = await none.list("board");
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toContain("records.read");
    expectError(await none.get("tasks", id), 403, "forbidden");
    expect((await none.create("board", { note: "write-only" })).status).toBe(201);
    expect((await o.list("board")).body.total).toBe(3);
  });

  it("no record crosses organizations or apps; a non-member gets 404 everywhere; a removed member loses access at once", async () => {
    const { t, orgsApi, create, join } = await orgRecordsBackend();
    const [alice, bob, mallory] = await Promise.all([1, 2, 3].map(() => signupTenant(t)));
    const orgA = await create(alice!, "A");
    const orgB = await create(mallory!, "B");
    await join(bob!, orgA, alice!, "admin");
    const a = orgClient(t, alice!, orgA);
    const secret = (await a.create("tasks", { code: "S", title: "secret plans" })).body.record.id as string;
    const mb = orgClient(t, mallory!, orgB);
    await mb.create("tasks", { code: "M", title: "mallory's" });

    // Mallory, owner of B, reaches nothing of A: through A's routes (404, as for no organization)
    // nor through B's (A's record is not in B).
    const viaA = orgClient(t, mallory!, orgA);
    for (const res of [
      await viaA.list("tasks"), await viaA.get("tasks", secret), await viaA.create("tasks", { code: "X" }), await viaA.update("tasks", secret, { x: 1 }),
      await viaA.upsert("tasks", { code: "S", x: 1 }), await viaA.remove("tasks", secret), await viaA.share("tasks", secret), await viaA.revoke("tasks", secret),
      await viaA.batch([{ op: "delete", collection: "tasks", id: secret }]),
    ]) {
      expectError(res, 404, "not_found");
    }
    for (const res of [await mb.get("tasks", secret), await mb.update("tasks", secret, { x: 1 }), await mb.remove("tasks", secret), await mb.share("tasks", secret)]) {
      expectError(res, 404, "not_found");
    }
    expect(dataOf(await mb.list("tasks", { filter: { $text: { $search: "secret" } } }))).toEqual([]);
    expect(dataOf(await mb.list("tasks"))).toEqual([{ code: "M", title: "mallory's" }]);
    // The same unique value in two organizations: each its own.
    expect((await mb.create("tasks", { code: "S" })).status).toBe(201);
    // The tenant's own records are not the organization's, and the reverse.
    expectError(await t.request("GET", `/api/v1/data/tasks/${secret}`, { bearer: alice!.bearer }), 400, "invalid_request");

    // Another app's tenant, and an org id of another app: 404.
    const other = await t.backend.admin.createApp({ name: "other" });
    await t.backend.admin.updateApp(other.id, { settings: { collections: ORG_COLLECTIONS } });
    const stranger = await signupTenant(t, { key: other.publishableKey, appId: other.id });
    expectError(await orgClient(t, stranger, orgA).list("tasks"), 404, "not_found");
    expectError(await orgClient(t, stranger, orgA).get("tasks", secret), 404, "not_found");
    const strangerOrg = (await t.request("POST", "/api/v1/orgs", { bearer: stranger.bearer, body: { name: "S" } })).body.org.id as string;
    expectError(await orgClient(t, stranger, strangerOrg).get("tasks", secret), 404, "not_found");

    // Bob is removed: his next request is refused, a read as well as a write.
    const b = orgClient(t, bob!, orgA);
    expect((await b.get("tasks", secret)).status).toBe(200);
    expect((await orgsApi(alice!, "DELETE", `/${orgA}/members/${bob!.id}`)).status).toBe(204);
    expectError(await b.get("tasks", secret), 404, "not_found");
    expectError(await b.list("tasks"), 404, "not_found");
    expectError(await b.create("tasks", { code: "late" }), 404, "not_found");
  });

  it("a tenant route on an organization collection, an organization route on a tenant one, and bad input: 400 naming the way", async () => {
    const { t, create } = await orgRecordsBackend();
    const alice = await signupTenant(t);
    const orgId = await create(alice);
    const org = orgClient(t, alice, orgId);
    const own = dataClient(t, alice);
    const wrong = await own.create("tasks", { code: "x" });
    expectError(wrong, 400, "invalid_request");
    expect(wrong.body.message).toContain(`/api/v1/orgs/{orgId}/collections/tasks/records`);
    expectError(await own.list("tasks"), 400, "invalid_request");
    expectError(await t.request("POST", "/api/v1/batch", { bearer: alice.bearer, body: { operations: [{ op: "create", collection: "tasks", data: {} }] } }), 400, "invalid_request");
    const notOrg = await org.create("notes", { code: "x" });
    expectError(notOrg, 400, "invalid_request");
    expect(notOrg.body.message).toContain("collections.notes.org");
    expectError(await org.list("undeclared"), 400, "invalid_request");
    expectError(await org.batch([{ op: "create", collection: "notes", data: {} }]), 400, "invalid_request");
    // Usage counts belong to the organization's billing routes, not its records' batch.
    const increment = await org.batch([{ op: "increment", featureKey: "exports" }]);
    expectError(increment, 400, "invalid_request");
    expect(increment.body.message).toContain(`/api/v1/orgs/${orgId}/billing/usage/exports/increment`);

    expectError(await org.create("tasks", "not an object"), 400, "invalid_request");
    expectError(await org.create("bad-name!", {}), 400, "invalid_request");
    expectError(await org.list("tasks", { filter: "{nope" }), 400, "invalid_filter");
    expectError(await org.list("tasks", { limit: 0 }), 400, "invalid_request");
    expectError(await org.list("tasks", { after: "garbage" }), 400, "invalid_cursor");
    expectError(await org.upsert("tasks", { title: "no code" }), 400, "invalid_request");
    expectError(await org.list("board", { filter: { $text: { $search: "x" } } }), 400, "invalid_filter");
    expectError(await t.request("GET", `/api/v1/orgs/${orgId}/collections/tasks/records`), 401, "unauthorized");

    // The setting itself.
    const developer = await developerSession(t);
    await t.backend.admin.setAppOwner(t.app.id, (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.email);
    for (const org of ["yes", false, { write: "admin" }, { read: "members" }]) {
      const res = await t.request("PATCH", `/api/v1/admin/apps/${t.app.id}`, { developer, body: { settings: { collections: { tasks: { org } } } } });
      expectError(res, 400, "invalid_request");
    }
  });
});

describe("organization records: the data owner", () => {
  it("counts against the byte quota per organization, never shows as a tenant, and is not in a member's export", async () => {
    const { t, create } = await orgRecordsBackend({ quotas: { recordBytes: 200 } });
    const developer = await developerSession(t);
    await t.backend.admin.setAppOwner(t.app.id, (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.email);
    const alice = await signupTenant(t);
    const orgId = await create(alice);
    const org = orgClient(t, alice, orgId);
    expect((await org.create("tasks", { code: "a", secret: "org-only-marker", pad: "x".repeat(120) })).status).toBe(201);
    expectError(await org.create("tasks", { code: "b", pad: "x".repeat(120) }), 402, "limit_reached");
    // Alice's own records have their own 200 bytes.
    expect((await dataClient(t, alice).create("notes", { code: "a", pad: "x".repeat(120) })).status).toBe(201);

    // Not a tenant: not in the developer's tenant list, its count, the usage, nor found by id.
    const tenants = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants?limit=100`, { developer });
    expect(tenants.body.tenants.map((x: { id: string }) => x.id)).toEqual([alice.id]);
    expect(tenants.body.total).toBe(1);
    const search = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants?email=${orgId.slice(0, 6)}`, { developer });
    expect(search.body.total).toBe(0);
    const usage = await t.request("GET", "/api/v1/developer/usage", { developer });
    expect(usage.body.totals).toMatchObject({ tenants: 1, records: 2 });
    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants/${orgId}/overview`, { developer }), 404, "not_found");
    expectError(await t.request("GET", `/api/v1/admin/apps/${t.app.id}/tenants/${orgId}`, { developer }), 404, "not_found");
    expectError(await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/tenants/${orgId}`, { developer }), 404, "not_found");
    // Alice's account export holds her own records, not her organization's (stored entries: the bytes read as text).
    const exported = await t.backend.fetch(new Request("http://localhost/api/v1/account/export", { headers: { authorization: `Bearer ${alice.accessToken}`, "x-service-app": t.app.id } }));
    expect(exported.status).toBe(200);
    const zip = Buffer.from(await exported.arrayBuffer()).toString("latin1");
    expect(zip).toContain("records/notes.jsonl");
    expect(zip).not.toContain("records/tasks.jsonl");
    expect(zip).not.toContain("org-only-marker");
    // Nobody signs in as it.
    expectError(await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: orgId, password: "correct horse battery" } }), 401, "invalid_credentials");
  });

  it("an organization's plan sets its record caps (records, record_bytes), not the members' own", async () => {
    const { t, create } = await orgRecordsBackend();
    const app = (await t.backend.core.db.apps.findById(t.app.id))!;
    const plan = await createPlan(t.backend.core, app, { name: "Tiny", slug: "tiny", priceCents: 0, entitlements: { records: 1 } });
    const alice = await signupTenant(t);
    const orgId = await create(alice);
    await grantOrg(t.backend.core, app, { tenantId: null }, orgId, "gift", { planId: plan.id });
    const org = orgClient(t, alice, orgId);
    expect((await org.create("tasks", { code: "a" })).status).toBe(201);
    expectError(await org.create("tasks", { code: "b" }), 402, "limit_reached");
    // Alice's own records keep the app's caps.
    for (const code of ["a", "b"]) expect((await dataClient(t, alice).create("notes", { code })).status).toBe(201);
  });

  it("a tenant's own records in a collection later declared an organization's stay in its account export", async () => {
    const { t } = await orgRecordsBackend({}, { drafts: {} });
    const alice = await signupTenant(t);
    expect((await dataClient(t, alice).create("drafts", { title: "written-before-the-change" })).status).toBe(201);
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { drafts: { org: true } } } });
    expectError(await dataClient(t, alice).list("drafts"), 400, "invalid_request");
    const exported = await t.backend.fetch(new Request("http://localhost/api/v1/account/export", { headers: { authorization: `Bearer ${alice.accessToken}`, "x-service-app": t.app.id } }));
    expect(exported.status).toBe(200);
    const zip = Buffer.from(await exported.arrayBuffer()).toString("latin1");
    expect(zip).toContain("records/drafts.jsonl");
    expect(zip).toContain("written-before-the-change");
  });

  it("deleting the organization deletes its records and share links; an account deletion that ends it does too", async () => {
    const { t, orgsApi, create, join } = await orgRecordsBackend();
    const developer = await developerSession(t);
    await t.backend.admin.setAppOwner(t.app.id, (await t.request("GET", "/api/v1/developer/me", { developer })).body.developer.email);
    const [alice, bob] = await Promise.all([signupTenant(t), signupTenant(t)]);
    const usage = async () => (await t.request("GET", "/api/v1/developer/usage", { developer })).body.totals as { tenants: number; records: number };

    const first = await create(alice!, "first");
    await join(bob!, first, alice!);
    const a = orgClient(t, alice!, first);
    const id = (await a.create("tasks", { code: "1" })).body.record.id as string;
    await a.create("tasks", { code: "2" });
    const link = (await a.share("tasks", id)).body.shareToken.token as string;
    expect((await t.request("GET", `/api/v1/public/shared/${link}`)).status).toBe(200);
    expect(await usage()).toMatchObject({ tenants: 2, records: 2 });
    expect((await orgsApi(alice!, "DELETE", `/${first}`)).status).toBe(204);
    expectError(await t.request("GET", `/api/v1/public/shared/${link}`), 404, "not_found");
    expect(await usage()).toMatchObject({ tenants: 2, records: 0 });

    // Alice alone in a second organization deletes her account: it goes, records and all.
    const second = await create(alice!, "second");
    const link2 = (await orgClient(t, alice!, second).share("tasks", (await orgClient(t, alice!, second).create("tasks", { code: "x" })).body.record.id)).body.shareToken.token;
    expect((await t.request("DELETE", `/api/v1/admin/apps/${t.app.id}/tenants/${alice!.id}`, { developer })).status).toBe(204);
    expectError(await t.request("GET", `/api/v1/public/shared/${link2}`), 404, "not_found");
    expect(await usage()).toMatchObject({ tenants: 1, records: 0 });
  });
});

describe("tenantd/client: orgs.collection", () => {
  it("has a tenant collection's surface over an organization's records, and orgs.batch", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: ORG_COLLECTIONS } });
    const owner = client();
    await owner.auth.signUp({ email: "owner@example.com", password: PASSWORD });
    const org = await owner.orgs.create("Acme");
    const tasks = owner.orgs.collection<{ code: string; title?: string; n?: number }>(org.id, "tasks");
    const made = await tasks.create({ code: "A", title: "coffee beans", n: 1 });
    expect(await tasks.get(made.id)).toEqual(made);
    expect((await tasks.update(made.id, { n: 2 })).data).toEqual({ code: "A", title: "coffee beans", n: 2 });
    expect(await tasks.upsert({ code: "B", n: 3 })).toMatchObject({ created: true });
    const page = await tasks.list({ filter: { n: { $gte: 2 } }, sort: { n: -1 }, limit: 1 });
    expect([page.records.map((r) => r.data.code), page.total]).toEqual([["B"], 2]);
    expect((await tasks.list({ after: page.next!, filter: { n: { $gte: 2 } }, sort: { n: -1 }, limit: 1 })).records.map((r) => r.data.code)).toEqual(["A"]);
    expect((await tasks.search("coffee")).records.map((r) => r.id)).toEqual([made.id]);
    const link = await tasks.share(made.id);
    expect((await tasks.readShared(link.token)).id).toBe(made.id);
    expect(await tasks.revokeShares(made.id)).toEqual({ revoked: 1 });
    const results = await owner.orgs.batch(org.id, [{ op: "delete", collection: "tasks", id: made.id }]);
    expect(results).toHaveLength(1);
    await tasks.delete((await tasks.list()).records[0]!.id);
    expect((await tasks.list()).total).toBe(0);
    // The tenant's own collection of the same name refuses: the records are the organization's.
    const refused = await owner.collection("tasks").list().then(() => undefined, (e: unknown) => e);
    expect(refused).toBeInstanceOf(TenantdError);
    expect(refused).toMatchObject({ status: 400, code: "invalid_request" });
  });
});
