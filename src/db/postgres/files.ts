import { isPgForeignKeyViolation, type PgSql } from "./connection.ts";
import type { FilesRepository } from "../repositories.ts";
import type { FileBlobRef, FileRow } from "../types.ts";

export function createPgFilesRepo(sql: PgSql): FilesRepository {
  return {
    async insert(f, quotaBytes) {
      try {
        return await sql.begin(async (tx) => {
          // The tenant row lock makes the quota check and the insert one step for this tenant:
          // two concurrent uploads cannot both fit into the last free bytes.
          const [tenant] = await tx<{ deletingAt: number | null }[]>`SELECT deleting_at FROM tenants WHERE app_id = ${f.appId} AND id = ${f.tenantId} FOR NO KEY UPDATE`;
          // A tenant being deleted takes no new file: its blobs are being swept (see account/delete.ts).
          if (!tenant || tenant.deletingAt !== null) return "tenant_gone" as const;
          if (quotaBytes !== null) {
            const [u] = await tx<{ n: number }[]>`SELECT COALESCE(SUM(size_bytes), 0)::bigint AS n FROM files WHERE app_id = ${f.appId} AND tenant_id = ${f.tenantId}`;
            if (u!.n + f.sizeBytes > quotaBytes) return "over_quota" as const;
          }
          await tx`INSERT INTO files (id, app_id, tenant_id, pathname, size_bytes, mime_type, original_filename, sha256, created_at)
            VALUES (${f.id}, ${f.appId}, ${f.tenantId}, ${f.pathname}, ${f.sizeBytes}, ${f.mimeType}, ${f.originalFilename}, ${f.sha256}, ${f.createdAt})`;
          return "inserted" as const;
        });
      } catch (e) {
        if (isPgForeignKeyViolation(e)) return "tenant_gone";
        throw e;
      }
    },
    async usedBytes(appId, tenantId) {
      const [u] = await sql<{ n: number }[]>`SELECT COALESCE(SUM(size_bytes), 0)::bigint AS n FROM files WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
      return u!.n;
    },
    async count(appId, tenantId) {
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*)::bigint AS n FROM files WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
      return c!.n;
    },
    async find(appId, tenantId, id) {
      const [r] = await sql<FileRow[]>`SELECT * FROM files WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND id = ${id}`;
      return r;
    },
    async findPublic(id) {
      const [r] = await sql<FileRow[]>`SELECT * FROM files WHERE id = ${id}`;
      return r;
    },
    async remove(appId, tenantId, id) {
      return (await sql`DELETE FROM files WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND id = ${id}`).count === 1;
    },
    async removeById(appId, id) {
      await sql`DELETE FROM files WHERE app_id = ${appId} AND id = ${id}`;
    },
    async tenantBlobs(appId, tenantId) {
      return [...(await sql<FileBlobRef[]>`SELECT id, pathname FROM files WHERE app_id = ${appId} AND tenant_id = ${tenantId}`)];
    },
    async appBlobs(appId, afterId, limit) {
      return [...(await sql<FileBlobRef[]>`SELECT id, pathname FROM files WHERE app_id = ${appId} AND id > ${afterId} ORDER BY id LIMIT ${limit}`)];
    },
  };
}
