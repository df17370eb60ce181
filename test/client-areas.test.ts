import { describe, expect, it } from "vitest";
import { createClient, memoryStorage, TenantdError } from "../src/client/index.ts";
import { developerSession, serveHttp } from "./_helpers.ts";
import { authorize, oauthBackend, REDIRECT, useFakeOAuth } from "./oauth-helpers.ts";
import { sample } from "./files-helpers.ts";
import { clientBackend, PASSWORD } from "./client-helpers.ts";

const fake = useFakeOAuth();

async function rejection(p: Promise<unknown>): Promise<TenantdError> {
  const error = await p.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(TenantdError);
  return error as TenantdError;
}

describe("tenantd/client social login", () => {
  it("oauthUrl starts the flow; handleOAuthRedirect stores the fragment's tokens and clears the fragment", async () => {
    const t = await oauthBackend(fake);
    const { url } = await serveHttp(t.backend);
    const c = createClient({ url, appId: t.app.id, key: t.app.publishableKey, storage: memoryStorage() });
    const events: string[] = [];
    c.auth.onAuthStateChange((e) => events.push(e));

    const start = c.oauthUrl("github", { redirect: REDIRECT });
    expect(start).toMatch(new RegExp(`^${url}/api/v1/auth/oauth/github\\?appId=${t.app.id}&redirect=${encodeURIComponent(REDIRECT)}&state=[\\w-]{43}$`));
    const started = await fetch(start, { redirect: "manual" });
    expect(started.status).toBe(302);
    const back = await authorize(fake, "github", started.headers.get("location")!, { id: "7007", email: "social@example.com" });
    const cookie = started.headers.get("set-cookie")!.split(";")[0]!;
    const returned = await fetch(url + back.path, { headers: { cookie }, redirect: "manual" });
    const landing = returned.headers.get("location") ?? `${returned.status} ${await returned.text()}`;
    expect(landing).toMatch(new RegExp(`^${REDIRECT}#service_oauth=success`));

    const replaced: (string | undefined)[] = [];
    const result = await c.handleOAuthRedirect({ href: landing }, { replaceState: (_d, _u, to) => replaced.push(to) });
    expect(result?.status).toBe("success");
    expect(replaced).toEqual([REDIRECT]);
    expect((await c.auth.me()).email).toBe("social@example.com");
    expect((await c.auth.linkedProviders()).map((p) => p.provider)).toEqual(["github"]);
    expect(events).toEqual(["SIGNED_IN"]);

    // A refused sign-in comes back as an error code, and nothing is stored.
    const other = createClient({ url, appId: t.app.id, key: t.app.publishableKey, storage: memoryStorage() });
    const again = await fetch(other.oauthUrl("github", { redirect: REDIRECT }), { redirect: "manual" });
    const denied = await authorize(fake, "github", again.headers.get("location")!, { error: "access_denied" });
    const deniedBack = await fetch(url + denied.path, { headers: { cookie: again.headers.get("set-cookie")!.split(";")[0]! }, redirect: "manual" });
    const outcome = await other.handleOAuthRedirect(deniedBack.headers.get("location")!, { replaceState: () => {} });
    expect(outcome).toEqual({ status: "error", error: expect.stringMatching(/^[a-z_]+$/) });
    expect(await other.auth.getSession()).toBeNull();
    // A page without tenantd's fragment is left alone.
    expect(await other.handleOAuthRedirect("https://app.example.com/#section-2", { replaceState: () => expect.fail("must not touch history") })).toBeNull();
  });
});

describe("tenantd/client data and files", () => {
  interface Task {
    title: string;
    done: boolean;
    meta?: { priority: number };
  }

  it("collection: create, typed list with filter and sort, merge patch, upsert, share, delete", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { tasks: { unique: ["title"] } } } });
    const c = client();
    await c.auth.signUp({ email: "data@example.com", password: PASSWORD });
    const tasks = c.collection<Task>("tasks");
    const a = await tasks.create({ title: "a", done: false, meta: { priority: 1 } });
    await tasks.create({ title: "b", done: true, meta: { priority: 5 } });
    await tasks.create({ title: "c", done: false, meta: { priority: 3 } });

    const open = await tasks.list({ filter: { done: false, "meta.priority": { $gte: 2 } }, sort: { "meta.priority": -1 } });
    expect(open.records.map((r) => r.data.title)).toEqual(["c"]);
    const page = await tasks.list({ sort: { title: 1 }, limit: 2, offset: 1 });
    expect([page.total, page.records.map((r) => r.data.title)]).toEqual([3, ["b", "c"]]);
    expect((await tasks.list({ filter: { title: { $in: ["a", "b"] }, $id: { $ne: a.id } } })).records.map((r) => r.data.title)).toEqual(["b"]);

    const patched = await tasks.update(a.id, { done: true, meta: null });
    expect(patched.data).toEqual({ title: "a", done: true });
    const upserted = await tasks.upsert({ title: "a", done: false });
    expect([upserted.created, upserted.record.id, upserted.record.data.done]).toEqual([false, a.id, false]);

    const link = await tasks.share(a.id, { expiresInSeconds: 3600 });
    expect((await c.readShared<Task>(link.token)).data.title).toBe("a");
    expect(await tasks.revokeShares(a.id)).toEqual({ revoked: 1 });
    expect((await rejection(tasks.readShared(link.token))).code).toBe("not_found");

    await tasks.delete(a.id);
    const gone = await rejection(tasks.get(a.id));
    expect([gone.status, gone.code]).toEqual([404, "not_found"]);
    const bad = await rejection(tasks.list({ limit: 0 }));
    expect([bad.status, bad.code]).toEqual([400, "invalid_request"]);
  });

  it("collection.list pages on with after = the previous page's next", async () => {
    const { client } = await clientBackend();
    const c = client();
    await c.auth.signUp({ email: "cursor@example.com", password: PASSWORD });
    const tasks = c.collection<Task>("tasks");
    for (const title of ["a", "b", "c", "d", "e"]) await tasks.create({ title, done: false });
    const titles: string[] = [];
    let page = await tasks.list({ sort: { title: 1 }, limit: 2 });
    for (;;) {
      titles.push(...page.records.map((r) => r.data.title));
      if (page.next === undefined) break;
      page = await tasks.list({ sort: { title: 1 }, limit: 2, after: page.next });
    }
    expect([titles, page.total, page.offset]).toEqual([["a", "b", "c", "d", "e"], 5, 4]);
    const wrong = await rejection(tasks.list({ sort: { title: -1 }, after: (await tasks.list({ limit: 1 })).next! }));
    expect([wrong.status, wrong.code]).toEqual([400, "invalid_cursor"]);
  });

  it("batch: all operations in one transaction; writes with an idempotency key happen once", async () => {
    const { client } = await clientBackend();
    const c = client();
    await c.auth.signUp({ email: "batch@example.com", password: PASSWORD });
    const tasks = c.collection<Task>("tasks");
    const a = await tasks.create({ title: "a", done: false }, { idempotencyKey: "create-a" });
    expect((await tasks.create({ title: "a", done: false }, { idempotencyKey: "create-a" })).id).toBe(a.id);
    const results = await c.batch([
      { op: "create", collection: "tasks", data: { title: "b", done: false } },
      { op: "update", collection: "tasks", id: a.id, data: { done: true } },
      { op: "increment", featureKey: "syncs" },
    ]);
    expect(results.map((r) => r.status)).toEqual([201, 200, 200]);
    const failed = await rejection(c.batch([{ op: "create", collection: "tasks", data: { title: "c", done: false } }, { op: "delete", collection: "tasks", id: "rec_nope" }]));
    expect([failed.status, failed.code, failed.message.startsWith("operations[1]")]).toEqual([404, "not_found", true]);
    expect((await tasks.list()).total).toBe(2);
    expect((await c.billing.increment("syncs", { idempotencyKey: "sync-1" })).count).toBe(2);
    expect((await c.billing.increment("syncs", { idempotencyKey: "sync-1" })).count).toBe(2);
  });

  it("collection.search finds records by their words, with fields and the list's options", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { tasks: { search: { language: "en" } } } } });
    const c = client();
    await c.auth.signUp({ email: "search@example.com", password: PASSWORD });
    const tasks = c.collection<Task>("tasks");
    for (const title of ["Buy Café beans", "Call the café", "Buy milk"]) await tasks.create({ title, done: title.startsWith("Call") });
    expect((await tasks.search("cafe", { sort: { title: 1 } })).records.map((r) => r.data.title)).toEqual(["Buy Café beans", "Call the café"]);
    expect((await tasks.search("buy", { filter: { done: false }, fields: ["title"], limit: 1 })).total).toBe(2);
    const bad = await rejection(c.collection("other").search("x"));
    expect([bad.status, bad.code]).toEqual([400, "invalid_filter"]);
  });

  it("collection.search with rank: true puts the best match first and pages on with next", async () => {
    const { t, client } = await clientBackend();
    await t.backend.admin.updateApp(t.app.id, { settings: { collections: { tasks: { search: { language: "en" } } } } });
    const c = client();
    await c.auth.signUp({ email: "ranked@example.com", password: PASSWORD });
    const tasks = c.collection<Task>("tasks");
    for (const title of ["Café tea milk", "Café café cafe", "Buy milk", "Café café tea"]) await tasks.create({ title, done: false });
    const first = await tasks.search("cafe", { rank: true, limit: 2 });
    expect([first.total, first.records.map((r) => r.data.title)]).toEqual([3, ["Café café cafe", "Café café tea"]]);
    const rest = await tasks.search("cafe", { rank: true, limit: 2, after: first.next });
    expect([rest.offset, rest.records.map((r) => r.data.title), rest.next]).toEqual([2, ["Café tea milk"], undefined]);
    // The same as the sort written out.
    expect((await tasks.list({ filter: { $text: { $search: "cafe" } }, sort: { $rank: -1 } })).records.map((r) => r.data.title)).toEqual([
      "Café café cafe",
      "Café café tea",
      "Café tea milk",
    ]);
  });

  it("uploads a Blob (and bytes), reads its metadata, and deletes it", async () => {
    const { url, client } = await clientBackend();
    const c = client();
    await c.auth.signUp({ email: "files@example.com", password: PASSWORD });
    const png = sample("png");
    const file = await c.files.upload(new Blob([new Uint8Array(png)], { type: "image/png" }), { filename: "photo.png" });
    expect(file).toMatchObject({ mimeType: "image/png", originalFilename: "photo.png", sizeBytes: png.length });
    const served = await fetch(url + new URL(file.url).pathname);
    expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
    expect((await c.files.get(file.id)).id).toBe(file.id);

    const fromBytes = await c.files.upload(new Uint8Array(png), { filename: "raw.png", contentType: "image/png" });
    expect(fromBytes.mimeType).toBe("image/png");
    const refused = await rejection(c.files.upload(new Blob(["<html><script>alert(1)</script></html>"], { type: "text/html" }), { filename: "x.html" }));
    expect([refused.status, refused.code]).toEqual([415, "unsupported_media_type"]);

    await c.files.delete(file.id);
    expect((await rejection(c.files.get(file.id))).code).toBe("not_found");
  });
});

describe("tenantd/client billing, invites, family, account", () => {
  it("one method per endpoint, against the development billing provider", async () => {
    const { t, client } = await clientBackend();
    const dev = await developerSession(t);
    const admin = (method: string, path: string, body?: unknown) => t.request(method, `/api/v1/admin/apps/${t.app.id}${path}`, { developer: dev, body });
    const plan = (await admin("POST", "/plans", { name: "Family", slug: "family", priceCents: 500, entitlements: { family_seats: 2, exports: 2 } })).body.plan;
    // Checkout return URLs must be on one of the app's origins.
    expect((await admin("PATCH", "", { settings: { corsOrigins: ["https://app.example.com"] } })).status).toBe(200);

    const owner = client();
    await owner.auth.signUp({ email: "owner@example.com", password: PASSWORD });
    expect((await owner.billing.plans()).map((p) => p.slug)).toEqual(["family"]);
    expect(await owner.billing.subscription()).toBeNull();
    const checkout = await owner.billing.checkout({ planId: plan.id, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" });
    const confirmed = await t.request("POST", new URL(checkout).pathname, { raw: "action=confirm", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(confirmed.status).toBe(303);
    expect(await owner.billing.subscription()).toMatchObject({ planSlug: "family", status: "active", source: "billing_provider" });
    expect(await owner.billing.entitlements()).toEqual({ family_seats: 2, exports: 2 });
    expect(await owner.billing.portal({ returnUrl: "https://app.example.com/account" })).toMatch(/^http/);
    expect(await owner.billing.increment("exports", { by: 2 })).toEqual({ count: 2, period: "monthly", limit: 2 });
    const over = await rejection(owner.billing.increment("exports"));
    expect([over.status, over.code]).toEqual([402, "limit_reached"]);
    expect(await owner.billing.usage("exports", { period: "daily" })).toEqual({ count: 0, period: "daily", limit: 2 });

    const created = await owner.invites.create({ note: "for a friend" });
    expect(created.token.token).toMatch(/^inv_/);
    expect((await owner.invites.list()).tokens.map((i) => i.note)).toEqual(["for a friend"]);
    expect((await owner.invites.delete(created.token.id)).used).toBe(0);

    const invite = await owner.family.createInvite();
    const member = client();
    const joined = await member.family.consume({ token: invite.invite.token, email: "member@example.com", password: PASSWORD });
    expect(joined.result).toBe("new");
    expect((await member.auth.me()).email).toBe("member@example.com");
    expect((await member.billing.subscription())?.source).toBe("family");
    expect((await owner.family.members()).map((m) => m.email)).toEqual(["member@example.com"]);
    expect((await owner.family.listInvites()).invites).toHaveLength(1);
    await member.family.leave();

    const second = await owner.family.createInvite({ expiresInSeconds: 3600 });
    const existing = await member.family.consume({ token: second.invite.token, email: "member@example.com", password: PASSWORD });
    expect(existing.result).toBe("email_exists");
    const rejoined = await member.family.join(second.invite.token);
    expect(rejoined.parentTenantId).toBe((await owner.auth.me()).id);
    expect((await member.auth.getSession())?.accessToken).toBe(rejoined.accessToken);
    await owner.family.removeMember(joined.result === "new" ? joined.tenant.id : "");
    const third = await owner.family.createInvite();
    expect((await owner.family.revokeInvite(third.invite.id)).revokedInviteId).toBe(third.invite.id);

    await member.account.delete();
    expect(await member.auth.getSession()).toBeNull();
    expect(member.eventNames().at(-1)).toBe("SIGNED_OUT");
    const login = await rejection(member.auth.signIn({ email: "member@example.com", password: PASSWORD }));
    expect(login.code).toBe("invalid_credentials");
  });
});

describe("tenantd/client account activity and export", () => {
  it("account.activity() pages the tenant's own events; account.export() hands back the ZIP reply", async () => {
    const { client } = await clientBackend();
    const c = client();
    await c.auth.signUp({ email: "activity@example.com", password: PASSWORD });
    await c.auth.signOut();
    await c.auth.signIn({ email: "activity@example.com", password: PASSWORD });
    const first = await c.account.activity({ limit: 2 });
    expect(first.activity.map((a) => a.action)).toEqual(["tenant.signed_in", "tenant.signed_out"]);
    expect(first.activity[0]!.actor).toBe("you");
    const older = await c.account.activity({ limit: 2, cursor: first.nextCursor! });
    expect([older.activity.map((a) => a.action), older.nextCursor]).toEqual([["tenant.signed_up"], null]);
    expect((await rejection(c.account.activity({ limit: 0 }))).code).toBe("invalid_request");

    const zip = await c.account.export();
    expect(zip.headers.get("content-type")).toBe("application/zip");
    const bytes = Buffer.from(await zip.arrayBuffer());
    expect(bytes.readUInt32LE(0)).toBe(0x04034b50);
    expect(bytes.includes(Buffer.from("activity@example.com"))).toBe(true);
  });

  it("account.exportByEmail() mails the link once the address is verified", async () => {
    const { client, t } = await clientBackend();
    const c = client();
    const tenant = await c.auth.signUp({ email: "mailed@example.com", password: PASSWORD });
    expect((await rejection(c.account.exportByEmail())).code).toBe("email_not_verified");
    await t.backend.core.db.tenants.markVerified(tenant.id, t.clock());
    expect(await c.account.exportByEmail()).toEqual({ sentTo: "mailed@example.com", expiresAt: new Date(t.clock() + 24 * 3600_000).toISOString() });
  });
});
