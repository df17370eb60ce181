import type { PgSql, PgTx } from "./connection.ts";
import type { TenantsRepository } from "../repositories.ts";
import type { NewSession, TenantRow } from "../types.ts";
import { runStep } from "./steps.ts";

/** The columns of a TenantRow (deleting_at is internal: the files repository reads it). */
export const TENANT_COLUMNS = "id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at";

/** The tenant of any app (the caller checks the app). */
export async function tenantById(sql: PgSql, id: string): Promise<TenantRow | undefined> {
  const [r] = await sql<TenantRow[]>`SELECT ${sql.unsafe(TENANT_COLUMNS)} FROM tenants WHERE id = ${id}`;
  return r;
}

export async function insertSession(tx: PgTx | PgSql, tenantId: string, appId: string, s: NewSession): Promise<void> {
  await tx`INSERT INTO sessions (id, tenant_id, app_id, created_at, expires_at, auth_methods) VALUES (${s.id}, ${tenantId}, ${appId}, ${s.createdAt}, ${s.expiresAt}, ${s.authMethods ?? null})`;
  await tx`INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (${s.refreshHash}, ${s.id}, ${s.createdAt})`;
}

export function createPgTenantsRepo(sql: PgSql): TenantsRepository {
  const like = (contains: string | undefined) => `%${(contains ?? "").replace(/[\\%_]/g, (c) => "\\" + c)}%`;
  return {
    async createWithSession(t, session, step) {
      await sql.begin(async (tx) => {
        await tx`INSERT INTO tenants (id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at)
          VALUES (${t.id}, ${t.appId}, ${t.email}, ${t.passwordHash}, ${t.emailVerifiedAt}, ${t.locale}, ${t.parentTenantId}, ${t.createdAt})`;
        await insertSession(tx, t.id, t.appId, session);
        if (step) await runStep(tx, step, t.id);
      });
    },
    async findByEmail(appId, email) {
      const [r] = await sql<TenantRow[]>`SELECT ${sql.unsafe(TENANT_COLUMNS)} FROM tenants WHERE app_id = ${appId} AND email = ${email}`;
      return r;
    },
    async findById(appId, id) {
      const r = await tenantById(sql, id);
      return r?.appId === appId ? r : undefined;
    },
    async list(appId, opts) {
      const pattern = like(opts.emailContains);
      // Fixed fragments only; every value is a parameter.
      const verified = opts.verified === undefined ? sql`` : opts.verified ? sql`AND email_verified_at IS NOT NULL` : sql`AND email_verified_at IS NULL`;
      const from = opts.createdFrom === undefined ? sql`` : sql`AND created_at >= ${opts.createdFrom}`;
      const before = opts.createdBefore === undefined ? sql`` : sql`AND created_at < ${opts.createdBefore}`;
      const tenants = await sql<TenantRow[]>`SELECT ${sql.unsafe(TENANT_COLUMNS)} FROM tenants WHERE app_id = ${appId} AND email LIKE ${pattern} AND email <> id ${verified} ${from} ${before}
        ORDER BY created_at DESC, id LIMIT ${opts.limit} OFFSET ${opts.offset}`;
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM tenants WHERE app_id = ${appId} AND email LIKE ${pattern} AND email <> id ${verified} ${from} ${before}`;
      return { tenants: [...tenants], total: c!.n };
    },
    async markVerified(id, at) {
      await sql`UPDATE tenants SET email_verified_at = COALESCE(email_verified_at, ${at}) WHERE id = ${id}`;
    },
    async setPasswordHash(id, hash) {
      await sql`UPDATE tenants SET password_hash = ${hash} WHERE id = ${id}`;
    },
    async setLocale(id, locale) {
      await sql`UPDATE tenants SET locale = ${locale} WHERE id = ${id}`;
    },
    async remove(appId, id) {
      return (await sql`DELETE FROM tenants WHERE app_id = ${appId} AND id = ${id}`).count > 0;
    },
  };
}
