// The admin endpoints behind the dashboard's tenant pages, records and files browsers,
// webhook test event and development outbox; each refuses another developer's app with 404.
import { describe, expect, it } from "vitest";
import { developerSession, expectError, signupTenant, startBackend, type TestBackend } from "./_helpers.ts";
import { BOUNDARY, multipart, sample } from "./files-helpers.ts";
import { outboxFor } from "./_email.ts";
import { configureWebhook, finishedDeliveries, startReceiver } from "./_webhook-receiver.ts";
import { storeRows } from "./_store.ts";

const DAY = 24 * 3600 * 1000;

async function seeded() {
  const t = await startBackend({ webhooks: { allowInsecure: true } });
  const developer = await developerSession(t);
  const base = `/api/v1/admin/apps/${t.app.id}`;
  const get = (path: string) => t.request("GET", `${base}${path}`, { developer });
  return { t, developer, base, get };
}

const emails = (res: { body: { tenants: { email: string }[] } }) => res.body.tenants.map((x) => x.email);

describe("admin tenant search", () => {
  it("filters by email, verified, plan and creation time, sorts, and pages on the server", async () => {
    const { t, developer, base, get } = await seeded();
    const made: string[] = [];
    for (const name of ["carol", "alice", "bob", "dave"]) {
      made.push((await signupTenant(t, { email: `${name}@example.com` })).id);
      t.clock.advance(DAY);
    }
    await t.backend.core.db.tenants.markVerified(made[1]!, t.clock());
    const plan = await t.request("POST", `${base}/plans`, { developer, body: { name: "Pro", slug: "pro", priceCents: 500, entitlements: { pro: true } } });
    expect(plan.status, plan.text).toBe(201);
    expect((await t.request("POST", `${base}/tenants/bob@example.com/billing/gift`, { developer, body: { planId: "pro" } })).status).toBe(200);

    expect(emails(await get("/tenants"))).toEqual(["dave@example.com", "bob@example.com", "alice@example.com", "carol@example.com"]);
    expect(emails(await get("/tenants?sort=email"))).toEqual(["alice@example.com", "bob@example.com", "carol@example.com", "dave@example.com"]);
    expect(emails(await get("/tenants?sort=createdAt&limit=2&offset=1"))).toEqual(["alice@example.com", "bob@example.com"]);
    expect((await get("/tenants?sort=createdAt&limit=2&offset=1")).body).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(emails(await get("/tenants?email=AL"))).toEqual(["alice@example.com"]);
    expect(emails(await get("/tenants?email=%25"))).toEqual([]);
    expect(emails(await get("/tenants?verified=true"))).toEqual(["alice@example.com"]);
    expect((await get("/tenants?verified=false")).body.total).toBe(3);
    expect(emails(await get(`/tenants?plan=${plan.body.plan.id}`))).toEqual(["bob@example.com"]);
    const from = new Date(Date.UTC(2026, 0, 16, 0, 0)).toISOString();
    const to = new Date(Date.UTC(2026, 0, 18, 0, 0)).toISOString();
    expect(emails(await get(`/tenants?createdFrom=${from}&createdTo=${to}&sort=createdAt`))).toEqual(["alice@example.com", "bob@example.com"]);
    expect(emails(await get("/tenants?createdFrom=2026-01-17"))).toEqual(["dave@example.com", "bob@example.com"]);
  });

  it("answers 400 naming the parameter for bad queries", async () => {
    const { get } = await seeded();
    for (const [query, field] of [
      ["sort=name", "sort"],
      ["verified=yes", "verified"],
      ["createdFrom=yesterday", "createdFrom"],
      ["limit=0", "limit"],
      ["limit=1001", "limit"],
      ["offset=-1", "offset"],
      ["email=a&email=b", "email"],
    ] as const) {
      const res = await get(`/tenants?${query}`);
      expectError(res, 400, "invalid_request");
      expect(res.body.message, query).toContain(field);
    }
  });

  it("chooses a page of tenants, searched by email or not, on an index alone, without sorting the table", async () => {
    const { t } = await seeded();
    const rows = storeRows(t.backend);
    if (rows.engine === "sqlite") {
      const explain = (where: string, ...params: unknown[]) =>
        (t.backend.core.sqlite
          .prepare(`EXPLAIN QUERY PLAN SELECT t.rowid FROM tenants t WHERE t.app_id = ?${where} ORDER BY t.created_at DESC, t.id DESC LIMIT 25 OFFSET 0`)
          .all(t.app.id, ...params) as { detail: string }[]).map((p) => p.detail).join(" | ");
      for (const details of [explain(""), explain(" AND instr(t.email, ?) > 0", "zoe"), explain(" AND t.email_verified_at IS NULL")]) {
        expect(details).toContain("COVERING INDEX tenants_app_created");
        expect(details).not.toContain("TEMP B-TREE");
      }
    } else {
      // PostgreSQL plans by statistics: on a handful of rows it rightly reads the table whole.
      // On an app of some size it must find the page through an index, already in order.
      await rows.run(
        `INSERT INTO tenants (id, app_id, email, created_at)
         SELECT 'ten_seed_' || i, ?, 'seed' || i || '@example.com', ?::bigint - i FROM generate_series(1, 5000) AS i`,
        t.app.id,
        t.clock(),
      );
      await rows.run("ANALYZE tenants");
      const explain = async (where: string, ...params: unknown[]) =>
        (await rows.column<string>(`EXPLAIN SELECT * FROM tenants WHERE app_id = ?${where} ORDER BY created_at DESC, id DESC LIMIT 25 OFFSET 0`, t.app.id, ...params)).join(" | ");
      for (const details of [await explain(""), await explain(" AND strpos(email, ?) > 0", "zoe"), await explain(" AND email_verified_at IS NULL")]) {
        expect(details).toMatch(/Index (Only )?Scan( Backward)? using tenants_app_created/);
        expect(details).not.toContain("Sort");
      }
    }
  });
});

describe("admin tenant page", () => {
  it("gives profile, sessions, billing, invites, family, record counts and files in one call", async () => {
    const { t, developer, base, get } = await seeded();
    const tenant = await signupTenant(t, { email: "zoe@example.com" });
    for (const [collection, n] of [["notes", 3], ["tasks", 1]] as const) {
      for (let i = 0; i < n; i++) expect((await t.request("POST", `/api/v1/data/${collection}`, { bearer: tenant.bearer, body: { data: { i } } })).status).toBe(201);
    }
    const up = await t.request("POST", "/api/v1/files/upload", {
      bearer: tenant.bearer,
      raw: multipart([{ filename: "face.png", type: "image/png", data: sample("png") }]),
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
    expect(up.status, up.text).toBe(201);
    const res = await get(`/tenants/${tenant.id}/overview`);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      tenant: { id: tenant.id, email: "zoe@example.com", emailVerifiedAt: null, locale: "en", hasPassword: true },
      billing: { subscription: null, entitlements: {} },
      invites: { tokens: [], quota: { limit: 5 } },
      family: { owner: null, members: [] },
      collections: [{ collection: "notes", count: 3 }, { collection: "tasks", count: 1 }],
      files: { total: 1, files: [{ originalFilename: "face.png", mimeType: "image/png", previewable: true }] },
    });
    expect(res.body.sessions).toHaveLength(1);
    expect(res.body.sessions[0]).toMatchObject({ active: true, endedAt: null });
    // by email too, URL-encoded
    expect((await get(`/tenants/${encodeURIComponent("zoe@example.com")}/overview`)).body.tenant.id).toBe(tenant.id);

    const fileId = res.body.files.files[0].id;
    const preview = await t.backend.fetch(new Request(`http://localhost${base}/tenants/${tenant.id}/files/${fileId}/preview`, { headers: { authorization: `Bearer ${developer}` } }));
    expect(preview.status).toBe(200);
    expect(preview.headers.get("content-type")).toBe("image/png");
    expect(Buffer.from(await preview.arrayBuffer()).equals(sample("png"))).toBe(true);

    const ended = await t.request("POST", `${base}/tenants/${tenant.id}/sessions/end`, { developer });
    expect(ended.body).toEqual({ ended: 1 });
    expectError(await t.request("GET", "/api/v1/data/notes", { bearer: tenant.bearer }), 401, "session_ended");
    expect((await get(`/tenants/${tenant.id}/overview`)).body.sessions[0]).toMatchObject({ active: false, endReason: "admin" });

    expect((await t.request("DELETE", `${base}/tenants/${tenant.id}/files/${fileId}`, { developer })).status).toBe(204);
    expectError(await t.request("DELETE", `${base}/tenants/${tenant.id}/files/${fileId}`, { developer }), 404, "not_found");
    expect((await get(`/tenants/${tenant.id}/files`)).body).toMatchObject({ files: [], total: 0 });
  });

  it("previews only safe image types", async () => {
    const { t, developer, base } = await seeded();
    const tenant = await signupTenant(t);
    const up = await t.request("POST", "/api/v1/files/upload", {
      bearer: tenant.bearer,
      raw: multipart([{ filename: "doc.pdf", type: "application/pdf", data: sample("pdf") }]),
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
    expect(up.status, up.text).toBe(201);
    expectError(await t.request("GET", `${base}/tenants/${tenant.id}/files/${up.body.id ?? up.body.file?.id}/preview`, { developer }), 415, "unsupported_media_type");
  });

  it("lists a tenant's records with the API's filter and sort language", async () => {
    const { t, get } = await seeded();
    const tenant = await signupTenant(t);
    const other = await signupTenant(t);
    for (let n = 1; n <= 5; n++) await t.request("POST", "/api/v1/data/notes", { bearer: tenant.bearer, body: { data: { n } } });
    await t.request("POST", "/api/v1/data/notes", { bearer: other.bearer, body: { data: { n: 99 } } });
    const filter = encodeURIComponent(JSON.stringify({ n: { $gte: 3 } }));
    const sort = encodeURIComponent(JSON.stringify({ n: 1 }));
    const res = await get(`/tenants/${tenant.id}/records/notes?filter=${filter}&sort=${sort}&limit=2`);
    expect(res.status, res.text).toBe(200);
    expect(res.body.total).toBe(3);
    expect(res.body.records.map((r: { data: { n: number } }) => r.data.n)).toEqual([3, 4]);
    expectError(await get(`/tenants/${tenant.id}/records/notes?filter=%7B`), 400, "invalid_filter");
    expectError(await get(`/tenants/${tenant.id}/records/no-dash?limit=1`), 400, "invalid_request");
    expectError(await get(`/tenants/${tenant.id}/records/notes?limit=0`), 400, "invalid_request");
  });
});

describe("webhook test event and delivery log filter", () => {
  it("sends webhook.test, a type receivers ignore, and filters the log by status", async () => {
    const { t, developer, base, get } = await seeded();
    expectError(await t.request("POST", `${base}/event-webhook-config/test`, { developer }), 404, "not_found");
    const receiver = await startReceiver();
    await configureWebhook(t, developer, receiver.url);
    const res = await t.request("POST", `${base}/event-webhook-config/test`, { developer });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ ok: true, event: "webhook.test" });
    const log = await finishedDeliveries(t, developer, 1);
    expect(log[0]).toMatchObject({ event: "webhook.test", status: "delivered", statusCode: 200 });
    expect(JSON.parse(receiver.received[0]!.raw.toString())).toMatchObject({ event: "webhook.test", tenantId: null, payload: { test: true } });
    expect((await get("/webhook-deliveries?status=delivered")).body.total).toBe(1);
    expect((await get("/webhook-deliveries?status=failed")).body).toMatchObject({ total: 0, deliveries: [] });
    expectError(await get("/webhook-deliveries?status=lost"), 400, "invalid_request");
  });
});

describe("development outbox", () => {
  it("lists the app's emails with their links", async () => {
    const { t, developer, base, get } = await seeded();
    expect((await get("/outbox")).body).toEqual({ messages: [] });
    await signupTenant(t, { email: "mail@example.com" });
    expect((await t.request("POST", `${base}/tenants/mail@example.com/resend-verification`, { developer })).body).toMatchObject({ sentBy: "tenantd" });
    await outboxFor(t, "mail@example.com");
    const res = await get("/outbox");
    expect(res.status, res.text).toBe(200);
    expect(res.body.messages[0]).toMatchObject({ to: "mail@example.com", kind: expect.any(String) });
    expect(res.body.messages[0].link).toMatch(/^http/);
    expectError(await get("/outbox?limit=500"), 400, "invalid_request");
  });
});

describe("isolation: another developer's app is a 404 on every dashboard endpoint", () => {
  it("answers 404 for reads and writes alike", async () => {
    const { t, developer } = await seeded();
    const tenant = await signupTenant(t);
    const stranger = await developerSession(t, "stranger@example.com");
    const own = await t.request("POST", "/api/v1/admin/apps", { developer: stranger, body: { name: "Mine" } });
    const base = `/api/v1/admin/apps/${t.app.id}`;
    const calls: [string, string][] = [
      ["GET", "/tenants"],
      ["GET", `/tenants/${tenant.id}/overview`],
      ["POST", `/tenants/${tenant.id}/sessions/end`],
      ["GET", `/tenants/${tenant.id}/records/notes`],
      ["GET", `/tenants/${tenant.id}/files`],
      ["GET", `/tenants/${tenant.id}/files/fil_x/preview`],
      ["DELETE", `/tenants/${tenant.id}/files/fil_x`],
      ["POST", "/event-webhook-config/test"],
      ["GET", "/webhook-deliveries?status=delivered"],
      ["GET", "/outbox"],
    ];
    for (const [method, path] of calls) {
      const res = await t.request(method, `${base}${path}`, { developer: stranger });
      expect({ path, status: res.status, error: res.body?.error }).toEqual({ path, status: 404, error: "not_found" });
    }
    // The tenant is not reachable through the stranger's own app either.
    const viaOwn = await t.request("GET", `/api/v1/admin/apps/${own.body.app.id}/tenants/${tenant.id}/overview`, { developer: stranger });
    expectError(viaOwn, 404, "not_found");
    // And the owner still can.
    expect((await t.request("GET", `${base}/tenants/${tenant.id}/overview`, { developer })).status).toBe(200);
    expect((await t.request("GET", `${base}/tenants/${tenant.id}/overview`, { developer })).body.sessions[0].active).toBe(true);
  });
});
