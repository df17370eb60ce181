import type { SqliteDb } from "./connection.ts";

export interface AppUsage {
  appId: string;
  tenants: number;
  records: number;
  fileBytes: number;
  webhookDeliveriesThisMonth: number;
}

/**
 * Counts for the developer usage endpoint. Tables of areas whose schema is not in this
 * database count as zero, so the figure never lies about what exists.
 */
export function createStatsRepo(db: SqliteDb) {
  const hasTable = (name: string) =>
    db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  const zero = { get: () => ({ n: 0 }) };
  const q = {
    tenants: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM tenants WHERE app_id = ?"),
    records: hasTable("records") ? db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM records WHERE app_id = ?") : zero,
    fileBytes: hasTable("files")
      ? db.prepare<[string], { n: number }>("SELECT COALESCE(SUM(size_bytes), 0) AS n FROM files WHERE app_id = ?")
      : zero,
    deliveries: hasTable("webhook_deliveries")
      ? db.prepare<[string, number], { n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE app_id = ? AND created_at >= ?")
      : zero,
  };
  return {
    async appUsage(appId: string, monthStart: number): Promise<AppUsage> {
      return {
        appId,
        tenants: q.tenants.get(appId)!.n,
        records: q.records.get(appId)!.n,
        fileBytes: q.fileBytes.get(appId)!.n,
        webhookDeliveriesThisMonth: (q.deliveries as { get: (a: string, b: number) => { n: number } }).get(appId, monthStart).n,
      };
    },
  };
}
