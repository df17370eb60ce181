import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";
import { newId } from "../crypto/random.ts";
import { requireFileCountQuota, storageQuota } from "../account/quotas.ts";
import type { Core } from "../core.ts";
import type { AppRow, FileBlobRef, FileRow } from "../db/types.ts";
import type { FilePart } from "./multipart.ts";
import { removeBlob, storeSpool, type Spool } from "./blob-io.ts";
import { blobHeaders } from "./serve.ts";
import { createLimiter } from "../tools/limiter.ts";
import { sniffSpool } from "./sniff-spool.ts";
import { cleanFilename, extensionFor, extensionOf, refusedDeclaredType, refusedExtension } from "./policy.ts";

/** The entitlement that caps a tenant's stored bytes: a number, `false` (0), `true` (no cap); absent: the app's `settings.quotas.storageBytes`. */
export { STORAGE_ENTITLEMENT } from "../account/quotas.ts";

/** The spec's FileInfo. */
export function toFileInfo(core: Core, f: FileRow) {
  return {
    id: f.id,
    url: publicFileUrl(core, f),
    pathname: f.pathname,
    sizeBytes: f.sizeBytes,
    mimeType: f.mimeType,
    originalFilename: f.originalFilename,
    createdAt: toIso(f.createdAt)!,
  };
}

/**
 * `<publicUrl or cdnBaseUrl>/api/v1/public/files/<id>/<name>` (the name is cosmetic, the id
 * decides), or `<publicBaseUrl>/<pathname>` when a CDN serves the blobs themselves.
 */
export function publicFileUrl(core: Core, f: FileRow): string {
  if (core.config.files.publicBaseUrl !== null) return `${core.config.files.publicBaseUrl}/${f.pathname}`;
  const base = core.config.files.cdnBaseUrl ?? core.config.publicUrl;
  const name = f.originalFilename ?? `file${extensionFor(f.mimeType)}`;
  return `${base}/api/v1/public/files/${f.id}/${encodeURIComponent(name)}`;
}

const quotaError = (quota: number) =>
  fail("limit_reached", `This upload would take your stored files past your ${quota}-byte storage limit. Delete files or upgrade the plan.`);

/**
 * Uploads whose received bytes are held whole at once: for sniffing text that may be JSON,
 * and for storing through a driver without streams. This runs after the body has fully
 * arrived (spooled to disk), so a slow sender never holds a slot; a streamed write (fs
 * rename, S3 PUT) holds none.
 */
const STORING_AT_ONCE = 2;
const storing = new WeakMap<Core, <T>(task: () => Promise<T>) => Promise<T>>();
function storingSlot(core: Core) {
  let limit = storing.get(core);
  if (!limit) storing.set(core, (limit = createLimiter(STORING_AT_ONCE)));
  return limit;
}

/**
 * Stores an uploaded part (spooled to a temp file) for the tenant: refuses
 * browser-executable content (415) by its declared type, its name and its bytes, checks
 * the storage quota, writes the blob, then the row. Whichever of the two fails, neither is
 * left behind.
 */
export async function uploadFile(core: Core, app: AppRow, tenantId: string, part: FilePart, spool: Spool): Promise<FileRow> {
  const originalFilename = cleanFilename(part.filename);
  const refusedBy = refusedDeclaredType(part.contentType) ?? refusedExtension(part.filename) ?? refusedExtension(originalFilename);
  if (refusedBy) throw refusedError(refusedBy);
  const quota = await storageQuota(core, app, tenantId);
  if (quota !== null && (await core.db.files.usedBytes(app.id, tenantId)) + part.size > quota) throw quotaError(quota);
  await requireFileCountQuota(core, app, tenantId);
  return storePart(core, app, tenantId, part, spool, originalFilename, quota);
}

async function storePart(core: Core, app: AppRow, tenantId: string, part: FilePart, spool: Spool, originalFilename: string | null, quota: number | null): Promise<FileRow> {
  const whole = storingSlot(core);
  const sniffed = await sniffSpool(spool.path, part.size, extensionOf(originalFilename), whole);
  if ("refused" in sniffed) throw refusedError(`its content: ${sniffed.refused}`);

  const id = newId("file");
  const row: FileRow = {
    id,
    appId: app.id,
    tenantId,
    pathname: `${app.id}/${tenantId}/${id}${extensionFor(sniffed.mimeType)}`,
    sizeBytes: part.size,
    mimeType: sniffed.mimeType,
    originalFilename,
    sha256: part.sha256,
    createdAt: core.clock(),
  };
  try {
    const separateOrigin = core.config.files.cdnBaseUrl !== null || core.config.files.publicBaseUrl !== null;
    await storeSpool(core, spool, row.pathname, { size: row.sizeBytes, sha256: row.sha256, headers: blobHeaders(row, separateOrigin) }, whole);
  } catch (e) {
    core.log.error("files: storage write failed", { pathname: row.pathname, error: String(e) });
    await removeBlobQuietly(core, row.pathname);
    throw fail("unavailable", "The file could not be written to storage; nothing was stored. Try again.");
  }
  let result;
  try {
    result = await core.db.files.insert(row, quota);
  } catch (e) {
    await removeBlobQuietly(core, row.pathname);
    throw e;
  }
  if (result !== "inserted") {
    await removeBlobQuietly(core, row.pathname);
    if (result === "over_quota") throw quotaError(quota!);
    throw fail("session_ended", "Your account was deleted during the upload; nothing was stored.");
  }
  return row;
}

function refusedError(what: string) {
  return fail(
    "unsupported_media_type",
    `This file type is not accepted (${what}): HTML, SVG, XML, JavaScript and other types a browser would run are refused.`,
  );
}

async function removeBlobQuietly(core: Core, pathname: string): Promise<void> {
  try {
    await core.storage.removeItem(pathname);
  } catch (e) {
    core.log.error("files: could not remove an orphan blob", { pathname, error: String(e) });
  }
}

export async function requireOwnFile(core: Core, app: AppRow, tenantId: string, id: string): Promise<FileRow> {
  const file = await core.db.files.find(app.id, tenantId, id);
  if (!file) throw fail("not_found", `No file ${id} among your files.`);
  return file;
}

/** Removes the blob, then the row: if storage fails the row stays, so the delete can be retried. */
export async function deleteFile(core: Core, app: AppRow, tenantId: string, id: string): Promise<void> {
  const file = await requireOwnFile(core, app, tenantId, id);
  await removeBlob(core, file.pathname);
  await core.db.files.remove(app.id, tenantId, id);
}

const BLOB_REMOVAL_CONCURRENCY = 8;

/**
 * Removes blobs a few at a time, each row right after its blob, so a retry after a storage
 * failure only has the rest to do. Throws once all were tried if any failed.
 */
async function removeBlobs(core: Core, appId: string, refs: FileBlobRef[]): Promise<void> {
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < refs.length) {
      const ref = refs[next++]!;
      try {
        await core.storage.removeItem(ref.pathname);
        await core.db.files.removeById(appId, ref.id);
      } catch (e) {
        failed++;
        core.log.error("files: could not remove a blob", { pathname: ref.pathname, error: String(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BLOB_REMOVAL_CONCURRENCY, refs.length) }, worker));
  // 503, not 500: storage is down, the request was fine; what is left is removed on a retry.
  if (failed > 0) throw fail("unavailable", `${failed} stored file(s) could not be removed from storage, so the deletion did not finish. Try it again later.`);
}

/** Every blob of the tenant (on account deletion). */
export async function removeTenantFiles(core: Core, app: AppRow, tenantId: string): Promise<void> {
  await removeBlobs(core, app.id, await core.db.files.tenantBlobs(app.id, tenantId));
}

/** Every blob of the app (on app deletion), a page at a time. */
export async function removeAppFiles(core: Core, app: AppRow): Promise<void> {
  const PAGE = 500;
  for (let after = "", page; (page = await core.db.files.appBlobs(app.id, after, PAGE)).length > 0; after = page.at(-1)!.id) {
    await removeBlobs(core, app.id, page);
  }
}

/**
 * Removes every blob stored under the tenant's prefix (`<appId>/<tenantId>/`) whatever the
 * rows say: after an account deletion, blobs of uploads that were in flight meanwhile.
 */
export async function sweepTenantBlobs(core: Core, appId: string, tenantId: string): Promise<void> {
  try {
    const keys = await core.storage.getKeys(`${appId}:${tenantId}:`);
    for (const key of keys) await removeBlobQuietly(core, key);
  } catch (e) {
    core.log.error("files: could not sweep a deleted tenant's blobs", { appId, tenantId, error: String(e) });
  }
}
