import type { PgQuery, PgSql, PgTx } from "./connection.ts";
import type { InvitesRepository } from "../repositories.ts";
import type { InviteRow, RemoveOutcome } from "../types.ts";
import { stepCall } from "./steps.ts";

export type InviteTable = "invite_tokens" | "family_invites";

/** The statements both invite tables need; `table` is one of two fixed names, never input. */
export function pgInviteStatements(table: InviteTable) {
  return {
    async insert(q: PgQuery, r: InviteRow) {
      await q`INSERT INTO ${q(table)} (id, app_id, tenant_id, token_hash, note, created_at, expires_at)
        VALUES (${r.id}, ${r.appId}, ${r.tenantId}, ${r.tokenHash}, ${r.note}, ${r.createdAt}, ${r.expiresAt})`;
    },
    async list(q: PgQuery, appId: string, tenantId: string): Promise<InviteRow[]> {
      return [...(await q<InviteRow[]>`SELECT * FROM ${q(table)} WHERE app_id = ${appId} AND tenant_id = ${tenantId} ORDER BY created_at DESC, id DESC`)];
    },
    async findByHash(q: PgQuery, appId: string, hash: string): Promise<InviteRow | undefined> {
      const [r] = await q<InviteRow[]>`SELECT * FROM ${q(table)} WHERE app_id = ${appId} AND token_hash = ${hash}`;
      return r;
    },
    async remove(q: PgQuery, appId: string, tenantId: string, id: string): Promise<RemoveOutcome> {
      const gone = await q`DELETE FROM ${q(table)} WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND id = ${id} AND used_at IS NULL`;
      if (gone.count > 0) return "removed";
      const [r] = await q`SELECT 1 FROM ${q(table)} WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND id = ${id}`;
      return r ? "used" : "not_found";
    },
    /** Single use and expiry in one statement: of two concurrent uses, one changes the row. */
    async markUsed(q: PgQuery, appId: string, hash: string, usedBy: string, now: number): Promise<boolean> {
      const r = await q`UPDATE ${q(table)} SET used_at = ${now}, used_by_tenant_id = ${usedBy}
        WHERE app_id = ${appId} AND token_hash = ${hash} AND used_at IS NULL AND expires_at > ${now}`;
      return r.count > 0;
    },
  };
}

/**
 * Locks the tenant's row: quota and seat checks of one tenant then take turns. NO KEY
 * UPDATE, not UPDATE: it does not conflict with the key-share locks that inserts referencing
 * the tenant take (a member's row naming its owner), which would otherwise deadlock.
 */
export async function lockTenant(tx: PgTx, appId: string, tenantId: string): Promise<boolean> {
  return (await tx`SELECT 1 FROM tenants WHERE app_id = ${appId} AND id = ${tenantId} FOR NO KEY UPDATE`).length > 0;
}

export function createPgInvitesRepo(sql: PgSql): InvitesRepository {
  const s = pgInviteStatements("invite_tokens");
  // Spent = used, plus unused ones still live; expired unused ones and deleted ones free their slot.
  const spent = async (q: PgQuery, appId: string, tenantId: string, now: number) => {
    const [r] = await q<{ n: number }[]>`SELECT COUNT(*) AS n FROM invite_tokens
      WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND (used_at IS NOT NULL OR expires_at > ${now})`;
    return r!.n;
  };
  return {
    async create(row, limit) {
      return sql.begin(async (tx) => {
        await lockTenant(tx, row.appId, row.tenantId);
        if (limit !== null && (await spent(tx, row.appId, row.tenantId, row.createdAt)) >= limit) return false;
        await s.insert(tx, row);
        return true;
      });
    },
    list: (appId, tenantId) => s.list(sql, appId, tenantId),
    spent: (appId, tenantId, now) => spent(sql, appId, tenantId, now),
    remove: (appId, tenantId, id) => s.remove(sql, appId, tenantId, id),
    findByHash: (appId, hash) => s.findByHash(sql, appId, hash),
    useInTransaction(appId, hash, usedBy, now) {
      return stepCall("invites.use", true, (tx) => s.markUsed(tx, appId, hash, usedBy, now));
    },
  };
}
