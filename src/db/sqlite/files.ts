import type { SqliteDb } from "./connection.ts";
import type { FileBlobRef, FileRow, InsertFileResult } from "../types.ts";

interface RawFile {
  id: string;
  app_id: string;
  tenant_id: string;
  pathname: string;
  size_bytes: number;
  mime_type: string;
  original_filename: string | null;
  sha256: string;
  created_at: number;
}

const toFile = (r: RawFile): FileRow => ({
  id: r.id,
  appId: r.app_id,
  tenantId: r.tenant_id,
  pathname: r.pathname,
  sizeBytes: r.size_bytes,
  mimeType: r.mime_type,
  originalFilename: r.original_filename,
  sha256: r.sha256,
  createdAt: r.created_at,
});

export type FilesRepo = ReturnType<typeof createFilesRepo>;

export function createFilesRepo(db: SqliteDb) {
  const columns = "id, app_id, tenant_id, pathname, size_bytes, mime_type, original_filename, sha256, created_at";
  const q = {
    insert: db.prepare<[string, string, string, string, number, string, string | null, string, number]>(
      `INSERT INTO files (${columns}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    // One statement, so the quota check and the insert cannot be split by a concurrent upload.
    insertWithinQuota: db.prepare<[string, string, string, string, number, string, string | null, string, number, string, string, number, number]>(
      `INSERT INTO files (${columns}) SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?
       WHERE (SELECT COALESCE(SUM(size_bytes), 0) FROM files WHERE app_id = ? AND tenant_id = ?) + ? <= ?`,
    ),
    deleting: db.prepare<[string, string], { one: number }>("SELECT 1 AS one FROM tenants WHERE app_id = ? AND id = ? AND deleting_at IS NOT NULL"),
    used: db.prepare<[string, string], { n: number }>("SELECT COALESCE(SUM(size_bytes), 0) AS n FROM files WHERE app_id = ? AND tenant_id = ?"),
    count: db.prepare<[string, string], number>("SELECT COUNT(*) FROM files WHERE app_id = ? AND tenant_id = ?").pluck(),
    find: db.prepare<[string, string, string], RawFile>("SELECT * FROM files WHERE app_id = ? AND tenant_id = ? AND id = ?"),
    findPublic: db.prepare<[string], RawFile>("SELECT * FROM files WHERE id = ?"),
    remove: db.prepare<[string, string, string]>("DELETE FROM files WHERE app_id = ? AND tenant_id = ? AND id = ?"),
    removeById: db.prepare<[string, string]>("DELETE FROM files WHERE app_id = ? AND id = ?"),
    tenantBlobs: db.prepare<[string, string], FileBlobRef>("SELECT id, pathname FROM files WHERE app_id = ? AND tenant_id = ?"),
    appBlobs: db.prepare<[string, string, number], FileBlobRef>("SELECT id, pathname FROM files WHERE app_id = ? AND id > ? ORDER BY id LIMIT ?"),
  };

  return {
    /**
     * Inserts the row unless it would take the tenant's stored bytes past `quotaBytes`
     * (null: no quota). A tenant deleted meanwhile is reported, not thrown.
     */
    async insert(f: FileRow, quotaBytes: number | null): Promise<InsertFileResult> {
      const values = [f.id, f.appId, f.tenantId, f.pathname, f.sizeBytes, f.mimeType, f.originalFilename, f.sha256, f.createdAt] as const;
      try {
        // A tenant being deleted takes no new file: its blobs are being swept (see account/delete.ts).
        if (q.deleting.get(f.appId, f.tenantId)) return "tenant_gone";
        if (quotaBytes === null) {
          q.insert.run(...values);
          return "inserted";
        }
        const { changes } = q.insertWithinQuota.run(...values, f.appId, f.tenantId, f.sizeBytes, quotaBytes);
        return changes === 1 ? "inserted" : "over_quota";
      } catch (e) {
        if ((e as { code?: string }).code === "SQLITE_CONSTRAINT_FOREIGNKEY") return "tenant_gone";
        throw e;
      }
    },
    /** Bytes the tenant stores now. */
    async usedBytes(appId: string, tenantId: string): Promise<number> {
      return q.used.get(appId, tenantId)!.n;
    },
    /** Files the tenant stores now. */
    async count(appId: string, tenantId: string): Promise<number> {
      return q.count.get(appId, tenantId)!;
    },
    /** The tenant's own file; another tenant's or app's is undefined. */
    async find(appId: string, tenantId: string, id: string): Promise<FileRow | undefined> {
      const r = q.find.get(appId, tenantId, id);
      return r && toFile(r);
    },
    /** Any file by id: the public URL carries only the (unguessable) id. */
    async findPublic(id: string): Promise<FileRow | undefined> {
      const r = q.findPublic.get(id);
      return r && toFile(r);
    },
    async remove(appId: string, tenantId: string, id: string): Promise<boolean> {
      return q.remove.run(appId, tenantId, id).changes === 1;
    },
    async removeById(appId: string, id: string): Promise<void> {
      q.removeById.run(appId, id);
    },
    async tenantBlobs(appId: string, tenantId: string): Promise<FileBlobRef[]> {
      return q.tenantBlobs.all(appId, tenantId);
    },
    /** The app's files after `afterId` in id order, `limit` at a time. */
    async appBlobs(appId: string, afterId: string, limit: number): Promise<FileBlobRef[]> {
      return q.appBlobs.all(appId, afterId, limit);
    },
  };
}
