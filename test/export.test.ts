// A tenant's data export (docs/export.md): GET /api/v1/account/export streams a ZIP of
// JSON, records as JSONL and the files' bytes; `tenantd tenant export` writes the same.
import { crc32 } from "node:zlib";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "citty";
import { afterEach, describe, expect, it, vi } from "vitest";
import tenantCli from "../src/cli/tenant.ts";
import { zipStream } from "../src/export/zip.ts";
import { cliStoreEnv, developerSession, expectError, opaqueBytes, signupTenant, startBackend, tempDir, type TestTenant } from "./_helpers.ts";
import { BOUNDARY, multipart } from "./files-helpers.ts";
import { outboxFor } from "./_email.ts";
import { storeRows } from "./_store.ts";
import { configureWebhook, startReceiver } from "./_webhook-receiver.ts";
import { hashToken } from "../src/crypto/random.ts";

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** Reads a ZIP the way unzip does, from its central directory (ZIP64 included), checking every CRC. */
function readZip(zip: Buffer): Map<string, Buffer> {
  // Plain checks, not expect(): an archive of 70,000 entries would spend seconds in matchers.
  const check = (ok: boolean, what: string) => {
    if (!ok) throw new Error(`not a valid ZIP: ${what}`);
  };
  let eocd = zip.length - 22;
  while (eocd >= 0 && zip.readUInt32LE(eocd) !== 0x06054b50) eocd--;
  check(eocd >= 0, "no end of central directory");
  let count = zip.readUInt16LE(eocd + 10);
  let cdOffset = zip.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) {
    const locator = eocd - 20;
    check(zip.readUInt32LE(locator) === 0x07064b50, "no ZIP64 locator");
    const z64 = Number(zip.readBigUInt64LE(locator + 8));
    check(zip.readUInt32LE(z64) === 0x06064b50, "no ZIP64 end record");
    count = Number(zip.readBigUInt64LE(z64 + 32));
    cdOffset = Number(zip.readBigUInt64LE(z64 + 48));
  }
  const files = new Map<string, Buffer>();
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    check(zip.readUInt32LE(p) === 0x02014b50, `central entry ${i}`);
    const crc = zip.readUInt32LE(p + 16);
    let size = zip.readUInt32LE(p + 24);
    const nameLength = zip.readUInt16LE(p + 28);
    const extraLength = zip.readUInt16LE(p + 30);
    const commentLength = zip.readUInt16LE(p + 32);
    let offset = zip.readUInt32LE(p + 42);
    const name = zip.subarray(p + 46, p + 46 + nameLength).toString("utf8");
    if (size === 0xffffffff || offset === 0xffffffff) {
      const extra = p + 46 + nameLength;
      size = Number(zip.readBigUInt64LE(extra + 4));
      offset = Number(zip.readBigUInt64LE(extra + 20));
    }
    check(zip.readUInt32LE(offset) === 0x04034b50, `local header of ${name}`);
    const start = offset + 30 + zip.readUInt16LE(offset + 26) + zip.readUInt16LE(offset + 28);
    const data = zip.subarray(start, start + size);
    check(crc32(data) === crc, `CRC of ${name}`);
    files.set(name, data);
    p += 46 + nameLength + extraLength + commentLength;
  }
  return files;
}

const jsonl = (b: Buffer | undefined) => b!.toString("utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l));

async function seeded() {
  const t = await startBackend();
  const alice = await signupTenant(t, { email: "alice@example.com" });
  const bob = await signupTenant(t, { email: "bob@example.com" });
  const write = (who: TestTenant, collection: string, data: unknown) => t.request("POST", `/api/v1/data/${collection}`, { bearer: who.bearer, body: { data } });
  for (let i = 0; i < 1200; i++) expect((await write(alice, "notes", { i, text: `note ${i}` })).status).toBe(201);
  expect((await write(alice, "todos", { title: "ünïcode ✓" })).status).toBe(201);
  expect((await write(bob, "notes", { secret: "bob's note" })).status).toBe(201);
  const bytes = opaqueBytes(3 * 1024 * 1024 + 17);
  const upload = await t.request("POST", "/api/v1/files/upload", {
    bearer: alice.bearer,
    raw: multipart([{ filename: "../holiday/photo.bin", type: "application/octet-stream", data: bytes }]),
    headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
  });
  expect(upload.status, upload.text).toBe(201);
  // The archive names a file by its id and the name it was uploaded with (as stored).
  return { t, alice, bob, bytes, fileId: upload.body.file.id as string, filePath: `files/${upload.body.file.id}/${upload.body.file.originalFilename}` };
}

describe("tenant data export", () => {
  it("streams a ZIP of the account, its records as JSONL, its activity and its files, and nothing of another tenant", async () => {
    const { t, alice, bob, bytes, fileId, filePath } = await seeded();
    const res = await t.backend.fetch(new Request("http://localhost/api/v1/account/export", { headers: { authorization: `Bearer ${alice.accessToken}`, "x-service-app": t.app.id } }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(res.headers.get("content-disposition")).toMatch(new RegExp(`^attachment; filename="export-${alice.id}-\\d{4}-\\d{2}-\\d{2}\\.zip"$`));
    expect(res.headers.get("cache-control")).toBe("no-store");
    const zip = readZip(Buffer.from(await res.arrayBuffer()));

    expect([...zip.keys()].sort()).toEqual(["account.json", "activity.jsonl", "billing.json", filePath, "files.jsonl", "invites.json", "records/notes.jsonl", "records/todos.jsonl", "webhook-events.jsonl"].sort());
    const account = JSON.parse(zip.get("account.json")!.toString());
    expect(account.tenant).toMatchObject({ id: alice.id, email: "alice@example.com", hasPassword: true });
    const notes = jsonl(zip.get("records/notes.jsonl"));
    expect(notes).toHaveLength(1200);
    expect(notes.map((n) => n.data.i)).toEqual(Array.from({ length: 1200 }, (_, i) => i));
    expect(jsonl(zip.get("records/todos.jsonl"))[0].data).toEqual({ title: "ünïcode ✓" });
    expect(zip.get(filePath)!.equals(bytes)).toBe(true);
    expect(jsonl(zip.get("files.jsonl"))[0]).toMatchObject({ id: fileId, sizeBytes: bytes.length, path: filePath });
    expect(jsonl(zip.get("activity.jsonl")).map((a) => a.action)).toEqual(["tenant.data_exported", "tenant.signed_up"]);
    // Nothing of the other tenant: its email, its record, its id.
    for (const theirs of ["bob@example.com", "bob's note", bob.id]) expect([...zip.values()].some((b) => b.includes(theirs)), theirs).toBe(false);

    const developer = await developerSession(t);
    const trail = await t.request("GET", `/api/v1/admin/apps/${t.app.id}/audit?action=tenant.data_exported`, { developer });
    expect(trail.body.entries[0]).toMatchObject({ tenantId: alice.id, actor: { type: "tenant", id: alice.id } });
  });

  it("refuses a second export of the same account while one is being read, and needs the tenant's bearer", async () => {
    const { t, alice, bob } = await seeded();
    const ask = (who: TestTenant) => t.backend.fetch(new Request("http://localhost/api/v1/account/export", { headers: { authorization: `Bearer ${who.accessToken}`, "x-service-app": t.app.id } }));
    const first = await ask(alice);
    expect(first.status).toBe(200);
    const reader = first.body!.getReader();
    await reader.read();
    const second = await ask(alice);
    expect(second.status).toBe(409);
    expect(await second.json()).toMatchObject({ error: "conflict" });
    // Another tenant exports meanwhile.
    expect((await ask(bob)).status).toBe(200);
    // A reader that goes away frees the account for the next export.
    await reader.cancel();
    const third = await ask(alice);
    expect(third.status).toBe(200);
    await third.arrayBuffer();
    expectError(await t.request("GET", "/api/v1/account/export"), 401, "unauthorized");
  });

  it("needs a recent authentication, like deleting the account: re-authenticating opens it again", async () => {
    const t = await startBackend();
    const alice = await signupTenant(t, { email: "alice@example.com" });
    t.clock.advance(10 * 60_000 + 1);
    const refused = await t.request("GET", "/api/v1/account/export", { bearer: alice.bearer });
    expectError(refused, 403, "reauthentication_required");
    expect(refused.body.message).toMatch(/^Exporting the account's data needs a sign-in within the last 10 minutes\. .*POST \/api\/v1\/auth\/reauthenticate/);
    expect((await t.backend.admin.listAudit(t.app.id, { action: "tenant.data_exported" })).entries).toEqual([]);
    expect((await t.request("POST", "/api/v1/auth/reauthenticate", { bearer: alice.bearer, body: { password: "correct horse battery" } })).status).toBe(200);
    const ok = await t.request("GET", "/api/v1/account/export", { bearer: alice.bearer });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/zip");
  });

  it("an export that fails before its reply frees the account's export slot", async () => {
    const { t, alice } = await seeded();
    const ask = () => t.backend.fetch(new Request("http://localhost/api/v1/account/export", { headers: { authorization: `Bearer ${alice.accessToken}`, "x-service-app": t.app.id } }));
    vi.spyOn(t.backend.core.db.audit, "append").mockRejectedValueOnce(new Error("the store is down"));
    expect((await ask()).status).toBe(500);
    const again = await ask();
    expect(again.status).toBe(200);
    await again.arrayBuffer();
  });

  it("tenantd tenant export writes the same archive to a file", async () => {
    const { t, alice, bytes, fileId, filePath } = await seeded();
    const out = join(tempDir(), "alice.zip");
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const args = ["export", "--data-dir", t.dataDir, "--app", t.app.id, "alice@example.com", "--out", out];
    for (const [k, v] of Object.entries(await cliStoreEnv(args))) vi.stubEnv(k, v);
    await runCommand(tenantCli, { rawArgs: args });
    const zip = readZip(readFileSync(out));
    expect(JSON.parse(zip.get("account.json")!.toString()).tenant.id).toBe(alice.id);
    expect(jsonl(zip.get("records/notes.jsonl"))).toHaveLength(1200);
    expect(zip.get(filePath)!.equals(bytes)).toBe(true);
    const trail = await t.backend.admin.listAudit(t.app.id, { action: "tenant.data_exported" });
    expect(trail.entries[0]).toMatchObject({ tenantId: alice.id, actor: { type: "operator" } });
  });

  it("mails a one-use 24-hour link in the tenant's language; its page downloads the archive once", async () => {
    const t = await startBackend();
    const signup = await t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "ana@example.com", password: "correct horse battery", locale: "es-MX" } });
    const bearer = { accessToken: signup.body.accessToken as string, appId: t.app.id };
    const ask = () => t.request("POST", "/api/v1/account/export/email", { bearer, body: {} });
    // The whole account never goes to an address nobody proved.
    expectError(await ask(), 403, "email_not_verified");
    await t.backend.core.db.tenants.markVerified(signup.body.tenant.id, t.clock());
    const sent = await ask();
    expect(sent.status, sent.text).toBe(202);
    expect(sent.body).toEqual({ sentTo: "ana@example.com", expiresAt: new Date(t.clock() + 24 * 3600_000).toISOString() });
    const [mail] = (await outboxFor(t, "ana@example.com")).filter((m) => m.kind === "export");
    expect(mail!.subject).toBe(`Tus datos de ${(await t.backend.admin.listApps())[0]!.name} están listos para descargar`);
    expect(mail!.text).toContain("El enlace solo funciona una vez y caduca en 24 horas.");
    const link = new URL(mail!.link!);
    expect(link.pathname).toBe("/account/export-download");
    const token = link.searchParams.get("token")!;
    // Only the hash is kept.
    expect(await storeRows(t.backend).column("SELECT token_hash FROM export_links")).toEqual([hashToken(token)]);

    // Opening the link (a mail scanner too) shows a button and uses nothing.
    for (let i = 0; i < 2; i++) {
      const shown = await t.request("GET", link.pathname + link.search);
      expect(shown.headers.get("content-type")).toContain("text/html");
      expect(shown.text).toContain("<button");
    }
    const form = { raw: new URLSearchParams({ app: t.app.id, token }).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } };
    const res = await t.backend.fetch(new Request(`http://localhost${link.pathname}`, { method: "POST", body: form.raw, headers: form.headers }));
    expect(res.headers.get("content-type")).toBe("application/zip");
    const zip = readZip(Buffer.from(await res.arrayBuffer()));
    expect(JSON.parse(zip.get("account.json")!.toString()).tenant.email).toBe("ana@example.com");
    const again = await t.request("POST", link.pathname, form);
    expect(again.text).toContain("already used");
    const trail = await t.backend.admin.listAudit(t.app.id, { action: "tenant.data_export*" });
    expect(trail.entries.map((e) => [e.action, e.details])).toEqual([["tenant.data_exported", { via: "email_link" }], ["tenant.data_export_link_sent", null]]);

    // A second link expires after 24 hours, used or not.
    await ask();
    const later = new URL((await outboxFor(t, "ana@example.com")).find((m) => m.kind === "export")!.link!);
    t.clock.advance(24 * 3600_000);
    expect((await t.request("GET", later.pathname + later.search)).text).toContain("has expired");
  });

  it("is refused when the app sends its own email, and to an impersonation session", async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    await t.backend.core.db.tenants.markVerified(tenant.id, t.clock());
    await t.backend.admin.updateApp(t.app.id, { settings: { email: { sendEmail: false } } });
    const refused = await t.request("POST", "/api/v1/account/export/email", { bearer: tenant.bearer, body: {} });
    expectError(refused, 409, "conflict");
    expect(refused.body.message).toContain("GET /api/v1/account/export");
  });

  it("holds the webhook events sent about the tenant and how each delivery went, never the app's URL", async () => {
    const t = await startBackend({ webhooks: { allowInsecure: true } });
    const developer = await developerSession(t);
    const receiver = await startReceiver();
    await configureWebhook(t, developer, receiver.url);
    await t.backend.admin.updateApp(t.app.id, { settings: { audit: { webhook: true } } });
    const tenant = await signupTenant(t);
    // Every event so far delivered, none still on its way.
    await vi.waitFor(async () => {
      const log = (await t.request("GET", `/api/v1/admin/apps/${t.app.id}/webhook-deliveries`, { developer })).body;
      if (log.queued !== 0 || log.deliveries.length === 0 || log.deliveries.some((d: { status: string }) => d.status === "sending")) throw new Error("deliveries still on their way");
    }, { timeout: 10_000, interval: 20 });
    const res = await t.backend.fetch(new Request("http://localhost/api/v1/account/export", { headers: { authorization: `Bearer ${tenant.accessToken}`, "x-service-app": t.app.id } }));
    const zip = readZip(Buffer.from(await res.arrayBuffer()));
    const events = jsonl(zip.get("webhook-events.jsonl"));
    expect(events[0]).toEqual({ id: expect.any(String), event: "audit.entry", at: expect.any(String), status: "delivered", deliveredAt: expect.any(String) });
    expect(zip.get("webhook-events.jsonl")!.includes(receiver.url)).toBe(false);
  });

  it("writes ZIP64 end records when an archive holds more than 65535 entries", async () => {
    async function* many() {
      for (let i = 0; i < 70_000; i++) yield { name: `e/${i}.txt`, data: Buffer.from(String(i)), mtime: Date.UTC(2026, 0, 1) };
    }
    const chunks: Uint8Array[] = [];
    for await (const c of zipStream(many())) chunks.push(c);
    const zip = readZip(Buffer.concat(chunks));
    expect(zip.size).toBe(70_000);
    expect(zip.get("e/69999.txt")!.toString()).toBe("69999");
  });
});
