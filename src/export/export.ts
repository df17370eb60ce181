import type { Core } from "../core.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import type { TenantAuth } from "../http/guards.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { tenantBilling } from "../billing/grants.ts";
import { listInviteTokens } from "../invites/tokens.ts";
import { listRecordRows, listRequest, recordJson, RECORD_LIMITS } from "../data/records.ts";
import { toFileInfo } from "../files/service.ts";
import { openBlobStream } from "../files/blob-io.ts";
import { listAudit } from "../audit/routes.ts";
import { toIso } from "../clock.ts";
import { fail } from "../errors.ts";
import { zipStream, type ZipEntry } from "./zip.ts";

/** Records and files read per query: a page at a time, so memory stays flat however much the tenant owns. */
const PAGE = 500;
const OLDEST_FIRST = JSON.stringify({ $createdAt: 1 });

const json = (value: unknown) => Buffer.from(JSON.stringify(value, null, 2) + "\n");
const line = (text: string) => Buffer.from(text + "\n");

/** A file's name inside the archive: no directories, no control characters, never empty. */
function safeName(name: string | null, fallback: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = (name ?? "").replace(/[\u0000-\u001f\u007f/\\]/g, "_").replace(/^\.+/, "_").slice(0, 200);
  return cleaned || fallback;
}

/** The records API's own list, run as the tenant (the export sees exactly what the tenant sees). */
const asTenant = (app: AppRow, tenant: TenantRow): TenantAuth => ({ app, tenantId: tenant.id, sessionId: "", parentTenantId: tenant.parentTenantId, exp: 0, everyCollection: true });

async function* records(core: Core, app: AppRow, tenant: TenantRow, collection: string): AsyncGenerator<Uint8Array> {
  for (let offset = 0; ; ) {
    const { rows } = await listRecordRows(core, asTenant(app, tenant), collection, listRequest({ sort: OLDEST_FIRST, limit: Math.min(PAGE, RECORD_LIMITS.maxLimit), offset }));
    if (rows.length === 0) return;
    yield Buffer.from(rows.map((r) => recordJson(r) + "\n").join(""));
    offset += rows.length;
  }
}

async function* activity(core: Core, app: AppRow, tenant: TenantRow): AsyncGenerator<Uint8Array> {
  for (let cursor: string | null | undefined; cursor !== null; ) {
    const page = await listAudit(core, app.id, { tenant: tenant.id, limit: String(PAGE), ...(cursor && { cursor }) });
    if (page.entries.length > 0) yield Buffer.from(page.entries.map((e) => JSON.stringify({ at: e.at, action: e.action, actor: e.actor.type, ip: e.ip, client: e.client, details: e.details }) + "\n").join(""));
    cursor = page.nextCursor;
  }
}

/**
 * The webhook events tenantd sent the app about this tenant and how each delivery went: what
 * the app was told, never where (the app's URL) or its server's answers.
 */
async function* webhookEvents(core: Core, app: AppRow, tenant: TenantRow): AsyncGenerator<Uint8Array> {
  for (let offset = 0; ; ) {
    const rows = await core.db.webhooks.tenantDeliveries(app.id, tenant.id, PAGE, offset);
    if (rows.length === 0) return;
    yield Buffer.from(rows.map((d) => JSON.stringify({ id: d.id, event: d.event, at: toIso(d.createdAt), status: d.status, deliveredAt: d.status === "delivered" ? toIso(d.finishedAt) : null }) + "\n").join(""));
    offset += rows.length;
  }
}

/**
 * Everything the tenant owns, as archive entries, each read when the archive reaches it:
 * `account.json` (profile, linked sign-in providers, family), `billing.json`
 * (subscriptions, entitlements, usage), `invites.json`, `activity.jsonl` (its security
 * events), `webhook-events.jsonl` (the app's webhook events about it and their delivery),
 * `records/<collection>.jsonl` (one record per line, as the API shows it),
 * `files.json` and `files/<id>/<name>` (the bytes as uploaded).
 */
export async function* exportEntries(core: Core, app: AppRow, tenant: TenantRow): AsyncGenerator<ZipEntry> {
  const now = core.clock();
  const [linked, members, membership, familyInvites] = await Promise.all([
    core.db.oauth.listForTenant(app.id, tenant.id),
    core.db.family.members(app.id, tenant.id),
    core.db.family.membership(app.id, tenant.id),
    core.db.family.listInvites(app.id, tenant.id),
  ]);
  yield {
    name: "account.json",
    mtime: now,
    data: json({
      exportedAt: toIso(now),
      app: { id: app.id, name: app.name },
      tenant: { ...toPublicTenant(tenant), locale: tenant.locale, hasPassword: tenant.passwordHash !== null },
      signInProviders: linked.map((l) => ({ provider: l.provider, email: l.email, linkedAt: toIso(l.linkedAt) })),
      family: {
        memberOf: membership ? { ownerTenantId: membership.ownerTenantId, ownerEmail: membership.ownerEmail, joinedAt: toIso(membership.joinedAt) } : null,
        members: members.map((m) => ({ tenantId: m.tenantId, email: m.email, joinedAt: toIso(m.joinedAt) })),
        invites: familyInvites.map((i) => ({ id: i.id, note: i.note, createdAt: toIso(i.createdAt), expiresAt: toIso(i.expiresAt), usedAt: toIso(i.usedAt) })),
      },
    }),
  };
  yield { name: "billing.json", mtime: now, data: json(await tenantBilling(core, app, tenant)) };
  yield { name: "invites.json", mtime: now, data: json(await listInviteTokens(core, app, tenant.id)) };
  yield { name: "activity.jsonl", mtime: now, data: activity(core, app, tenant) };
  yield { name: "webhook-events.jsonl", mtime: now, data: webhookEvents(core, app, tenant) };
  for (const { collection } of await core.db.admin.recordCounts(app.id, tenant.id)) {
    yield { name: `records/${collection}.jsonl`, mtime: now, data: records(core, app, tenant, collection) };
  }
  const manifest: Uint8Array[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const { ids } = await core.db.admin.tenantFileIds(app.id, tenant.id, PAGE, offset);
    for (const id of ids) {
      const file = await core.db.files.find(app.id, tenant.id, id);
      if (!file) continue; // deleted since the page was read
      const path = `files/${file.id}/${safeName(file.originalFilename, file.id)}`;
      const bytes = await openBlobStream(core, file.pathname, null);
      // A blob lost from storage is named in the manifest rather than failing the whole export.
      manifest.push(line(JSON.stringify({ ...toFileInfo(core, file), sha256: file.sha256, path: bytes ? path : null, ...(!bytes && { missing: true }) })));
      if (bytes) yield { name: path, mtime: file.createdAt, data: bytes as unknown as AsyncIterable<Uint8Array> };
    }
    if (ids.length < PAGE) break;
  }
  yield { name: "files.jsonl", mtime: now, data: Buffer.concat(manifest) };
}

const running = new WeakMap<Core, Set<string>>();

/**
 * The tenant's export as a ZIP stream (docs/export.md). One export per tenant at a time: a
 * second answers 409 while the first is read. Reading stops when the reader goes away.
 */
export function exportArchive(core: Core, app: AppRow, tenant: TenantRow): ReadableStream<Uint8Array> {
  let set = running.get(core);
  if (!set) running.set(core, (set = new Set()));
  const key = `${app.id}/${tenant.id}`;
  if (set.has(key)) throw fail("conflict", "An export of this account is already being downloaded: wait for it to finish.");
  set.add(key);
  const release = () => set.delete(key);
  const bytes = zipStream(exportEntries(core, app, tenant));
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const next = await bytes.next();
          if (next.done) {
            release();
            controller.close();
          } else controller.enqueue(next.value);
        } catch (e) {
          release();
          core.log.error("export failed midway", { appId: app.id, tenantId: tenant.id, error: e });
          controller.error(e);
        }
      },
      async cancel() {
        release();
        await bytes.return(undefined);
      },
    },
    // Bytes, not chunks: at most ~1 MiB is read ahead of a slow reader.
    { highWaterMark: 1024 * 1024, size: (chunk) => chunk.byteLength },
  );
}

/** The reply headers of an export download. */
export function exportHeaders(tenant: TenantRow, now: number): Record<string, string> {
  return {
    "content-type": "application/zip",
    "content-disposition": `attachment; filename="export-${tenant.id}-${toIso(now)!.slice(0, 10)}.zip"`,
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
  };
}
