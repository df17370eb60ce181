import type { PgSql } from "./connection.ts";
import type { MetaRepository, StatsRepository } from "../repositories.ts";
import { FOLD_DELTAS, type ScopeFolds } from "./record-scopes.ts";

export function createPgMetaRepo(sql: PgSql): MetaRepository {
  return {
    async ping() {
      await sql`SELECT 1`;
    },
    async get(key) {
      const [r] = await sql<{ value: string }[]>`SELECT value FROM server_meta WHERE key = ${key}`;
      return r?.value;
    },
    async set(key, value) {
      await sql`INSERT INTO server_meta (key, value) VALUES (${key}, ${value}) ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    },
  };
}

export function createPgStatsRepo(sql: PgSql, folds: ScopeFolds): StatsRepository {
  return {
    async appUsage(appId, monthStart) {
      const [r] = await sql<{ tenants: number; records: number; fileBytes: number; deliveries: number }[]>`
        SELECT (SELECT COUNT(*) FROM tenants WHERE app_id = ${appId}) AS tenants,
               (SELECT COUNT(*) FROM records WHERE app_id = ${appId}) AS records,
               (SELECT COALESCE(SUM(size_bytes), 0)::bigint FROM files WHERE app_id = ${appId}) AS file_bytes,
               (SELECT COUNT(*) FROM webhook_deliveries WHERE app_id = ${appId} AND created_at >= ${monthStart}) AS deliveries`;
      return { appId, tenants: r!.tenants, records: r!.records, fileBytes: r!.fileBytes, webhookDeliveriesThisMonth: r!.deliveries };
    },
    async tenantRecords(appId, tenantId) {
      // Kept by migration 5's triggers: a few rows per collection, not the records.
      const [r] = await sql<{ n: number; deltas: number }[]>`SELECT COALESCE(SUM(records), 0)::bigint AS n, COUNT(*) AS deltas FROM record_scopes WHERE tenant_id = ${tenantId} AND app_id = ${appId}`;
      if (r!.deltas > FOLD_DELTAS) folds.fold(appId, tenantId);
      return r!.n;
    },
  };
}
