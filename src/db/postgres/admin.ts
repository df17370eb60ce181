import type { PgSql } from "./connection.ts";
import type { AdminRepository } from "../repositories.ts";
import type { TenantSort, TenantSessionRow, TenantRow, DeliveryRow } from "../types.ts";
import { DELIVERY } from "./webhooks.ts";
import { TENANT_COLUMNS } from "./tenants.ts";

// Byte order for emails (COLLATE "C"), as SQLite sorts them, whatever the database's locale.
const ORDER: Record<TenantSort, string> = {
  createdAt: "created_at ASC, id ASC",
  "-createdAt": "created_at DESC, id DESC",
  email: 'email COLLATE "C" ASC',
  "-email": 'email COLLATE "C" DESC',
};

/** The developer dashboard's read queries over one app (every query carries the app id). */
export function createPgAdminRepo(sql: PgSql): AdminRepository {
  return {
    async searchTenants(appId, s) {
      // Fixed fragments only; every value is a parameter.
      const email = s.email ? sql`AND strpos(email, ${s.email}) > 0` : sql``;
      const verified = s.verified === undefined ? sql`` : s.verified ? sql`AND email_verified_at IS NOT NULL` : sql`AND email_verified_at IS NULL`;
      const from = s.createdFrom === undefined ? sql`` : sql`AND created_at >= ${s.createdFrom}`;
      const to = s.createdTo === undefined ? sql`` : sql`AND created_at < ${s.createdTo}`;
      const plan =
        s.planId === undefined
          ? sql``
          : sql`AND EXISTS (SELECT 1 FROM billing_subscriptions b WHERE b.plan_id = ${s.planId} AND b.tenant_id = tenants.id
              AND b.status IN ('active', 'trialing', 'past_due') AND (b.expires_at IS NULL OR b.expires_at > ${s.now}))`;
      const tenants = await sql<TenantRow[]>`SELECT ${sql.unsafe(TENANT_COLUMNS)} FROM tenants WHERE app_id = ${appId} AND email <> id ${email} ${verified} ${from} ${to} ${plan}
        ORDER BY ${sql.unsafe(ORDER[s.sort])} LIMIT ${s.limit} OFFSET ${s.offset}`;
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM tenants WHERE app_id = ${appId} AND email <> id ${email} ${verified} ${from} ${to} ${plan}`;
      return { tenants: [...tenants], total: c!.n };
    },
    async tenantSessions(appId, tenantId) {
      return [
        ...(await sql<TenantSessionRow[]>`SELECT id, created_at, expires_at, ended_at, end_reason FROM sessions
          WHERE app_id = ${appId} AND tenant_id = ${tenantId} ORDER BY created_at DESC LIMIT 50`),
      ];
    },
    async recordCounts(appId, tenantId) {
      return [
        ...(await sql<{ collection: string; count: number }[]>`SELECT collection, COUNT(*) AS count FROM records
          WHERE tenant_id = ${tenantId} AND app_id = ${appId} GROUP BY collection ORDER BY collection COLLATE "C"`),
      ];
    },
    async tenantFileIds(appId, tenantId, limit, offset) {
      const rows = await sql<{ id: string }[]>`SELECT id FROM files WHERE app_id = ${appId} AND tenant_id = ${tenantId}
        ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM files WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
      return { ids: rows.map((r) => r.id), total: c!.n };
    },
    async deliveries(appId, status, limit, offset, event) {
      const only = sql`${status ? sql`AND status = ${status}` : sql``} ${event ? sql`AND event = ${event}` : sql``}`;
      const deliveries = await sql<DeliveryRow[]>`SELECT ${sql.unsafe(DELIVERY)} FROM webhook_deliveries WHERE app_id = ${appId} ${only}
        ORDER BY created_at DESC, seq DESC LIMIT ${limit} OFFSET ${offset}`;
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE app_id = ${appId} ${only}`;
      return { deliveries: [...deliveries], total: c!.n };
    },
    async setSignInDisabled(appId, tenantId, at) {
      if (at === null) await sql`DELETE FROM tenant_sign_in_blocks WHERE tenant_id = ${tenantId} AND app_id = ${appId}`;
      else await sql`INSERT INTO tenant_sign_in_blocks (tenant_id, app_id, disabled_at) VALUES (${tenantId}, ${appId}, ${at}) ON CONFLICT (tenant_id) DO NOTHING`;
    },
    async signInDisabledAt(tenantId) {
      const [row] = await sql<{ at: number }[]>`SELECT disabled_at AS at FROM tenant_sign_in_blocks WHERE tenant_id = ${tenantId}`;
      return row ? Number(row.at) : null;
    },
  };
}
