import type { SqliteDb } from "./connection.ts";
import type { AppUsage } from "../types.ts";

/** Counts for the developer usage endpoint, one app at a time. */
export function createStatsRepo(db: SqliteDb) {
  const q = {
    tenants: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM tenants WHERE app_id = ? AND email <> id"),
    records: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM records WHERE app_id = ?"),
    fileBytes: db.prepare<[string], { n: number }>("SELECT COALESCE(SUM(size_bytes), 0) AS n FROM files WHERE app_id = ?"),
    deliveries: db.prepare<[string, number], { n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE app_id = ? AND created_at >= ?"),
  };
  return {
    async appUsage(appId: string, monthStart: number): Promise<AppUsage> {
      return {
        appId,
        tenants: q.tenants.get(appId)!.n,
        records: q.records.get(appId)!.n,
        fileBytes: q.fileBytes.get(appId)!.n,
        webhookDeliveriesThisMonth: q.deliveries.get(appId, monthStart)!.n,
      };
    },
  };
}
