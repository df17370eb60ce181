import type { SqliteDb } from "./connection.ts";
import { tenantColumns, toTenant, type RawTenant } from "./tenants.ts";
import type { TenantRow, TenantSearch, TenantSessionRow, TenantSort, DeliveryRow, DeliveryStatus, RawDelivery } from "../types.ts";
import { DELIVERY_LIST_COLUMNS, toDelivery } from "./webhooks.ts";

const ORDER: Record<TenantSort, string> = {
  createdAt: "t.created_at ASC, t.id ASC",
  "-createdAt": "t.created_at DESC, t.id DESC",
  email: "t.email ASC",
  "-email": "t.email DESC",
};

export type AdminRepo = ReturnType<typeof createAdminRepo>;

/** The developer dashboard's read queries over one app (every query carries the app id). */
export function createAdminRepo(db: SqliteDb) {
  // A filter set builds one of a few dozen statement shapes: prepare each once.
  const cache = new Map<string, ReturnType<typeof db.prepare<unknown[]>>>();
  const prepared = (sql: string) => {
    let s = cache.get(sql);
    if (!s) cache.set(sql, (s = db.prepare<unknown[]>(sql)));
    return s;
  };
  const q = {
    sessions: db.prepare<[string, string], { id: string; created_at: number; expires_at: number; ended_at: number | null; end_reason: string | null }>(
      "SELECT id, created_at, expires_at, ended_at, end_reason FROM sessions WHERE app_id = ? AND tenant_id = ? ORDER BY created_at DESC LIMIT 50",
    ),
    recordCounts: db.prepare<[string, string], { collection: string; n: number }>(
      "SELECT collection, COUNT(*) AS n FROM records WHERE tenant_id = ? AND app_id = ? GROUP BY collection ORDER BY collection",
    ),
    files: db.prepare<[string, string, number, number], { id: string }>("SELECT id FROM files WHERE app_id = ? AND tenant_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?"),
    fileCount: db.prepare<[string, string], { n: number }>("SELECT COUNT(*) AS n FROM files WHERE app_id = ? AND tenant_id = ?"),
    disable: db.prepare<[string, string, number]>("INSERT INTO tenant_sign_in_blocks (tenant_id, app_id, disabled_at) VALUES (?, ?, ?) ON CONFLICT (tenant_id) DO NOTHING"),
    enable: db.prepare<[string, string]>("DELETE FROM tenant_sign_in_blocks WHERE tenant_id = ? AND app_id = ?"),
    disabledAt: db.prepare<[string], { disabled_at: number }>("SELECT disabled_at FROM tenant_sign_in_blocks WHERE tenant_id = ?"),
  };

  return {
    async searchTenants(appId: string, s: TenantSearch): Promise<{ tenants: TenantRow[]; total: number }> {
      // An organization's data owner row (its email is its id, src/orgs/records.ts) is no tenant.
      const where = ["t.app_id = ?", "t.email <> t.id"];
      const params: (string | number)[] = [appId];
      if (s.email) {
        // Emails are stored lower-case and the search is lower-cased: instr is a plain
        // substring test, with no LIKE wildcards to escape.
        where.push("instr(t.email, ?) > 0");
        params.push(s.email);
      }
      if (s.verified !== undefined) where.push(s.verified ? "t.email_verified_at IS NOT NULL" : "t.email_verified_at IS NULL");
      if (s.createdFrom !== undefined) {
        where.push("t.created_at >= ?");
        params.push(s.createdFrom);
      }
      if (s.createdTo !== undefined) {
        where.push("t.created_at < ?");
        params.push(s.createdTo);
      }
      if (s.planId !== undefined) {
        where.push("EXISTS (SELECT 1 FROM billing_subscriptions b WHERE b.plan_id = ? AND b.tenant_id = t.id AND b.status IN ('active', 'trialing', 'past_due') AND (b.expires_at IS NULL OR b.expires_at > ?))");
        params.push(s.planId, s.now);
      }
      const from = `FROM tenants t WHERE ${where.join(" AND ")}`;
      // The page is chosen on the index alone (rowids), then only its rows are read.
      const rows = prepared(`SELECT ${tenantColumns("t.")} FROM tenants t WHERE t.rowid IN (SELECT t.rowid ${from} ORDER BY ${ORDER[s.sort]} LIMIT ? OFFSET ?) ORDER BY ${ORDER[s.sort]}`)
        .raw(true)
        .all(...params, s.limit, s.offset) as RawTenant[];
      const total = (prepared(`SELECT COUNT(*) AS n ${from}`).get(...params) as { n: number }).n;
      return { tenants: rows.map(toTenant), total };
    },
    async tenantSessions(appId: string, tenantId: string): Promise<TenantSessionRow[]> {
      return q.sessions.all(appId, tenantId).map((r) => ({ id: r.id, createdAt: r.created_at, expiresAt: r.expires_at, endedAt: r.ended_at, endReason: r.end_reason }));
    },
    async recordCounts(appId: string, tenantId: string): Promise<{ collection: string; count: number }[]> {
      return q.recordCounts.all(tenantId, appId).map((r) => ({ collection: r.collection, count: r.n }));
    },
    /** Ids of a tenant's files, newest first (the files repository reads each row). */
    async tenantFileIds(appId: string, tenantId: string, limit: number, offset: number): Promise<{ ids: string[]; total: number }> {
      return { ids: q.files.all(appId, tenantId, limit, offset).map((r) => r.id), total: q.fileCount.get(appId, tenantId)!.n };
    },
    /** The delivery log of one app, newest first, optionally of one status. */
    async deliveries(appId: string, status: DeliveryStatus | undefined, limit: number, offset: number, event?: string): Promise<{ deliveries: DeliveryRow[]; total: number }> {
      const where = ["app_id = ?", ...(status ? ["status = ?"] : []), ...(event ? ["event = ?"] : [])].join(" AND ");
      const params = [appId, ...(status ? [status] : []), ...(event ? [event] : [])];
      const rows = prepared(`SELECT ${DELIVERY_LIST_COLUMNS} FROM webhook_deliveries WHERE ${where} ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`).all(...params, limit, offset) as RawDelivery[];
      const total = (prepared(`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE ${where}`).get(...params) as { n: number }).n;
      return { deliveries: rows.map(toDelivery), total };
    },
    async setSignInDisabled(appId: string, tenantId: string, at: number | null): Promise<void> {
      if (at === null) q.enable.run(tenantId, appId);
      else q.disable.run(tenantId, appId, at);
    },
    async signInDisabledAt(tenantId: string): Promise<number | null> {
      return q.disabledAt.get(tenantId)?.disabled_at ?? null;
    },
  };
}
