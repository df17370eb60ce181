import type { SqliteDb } from "./connection.ts";
import type { InviteRow, RemoveOutcome } from "../types.ts";

interface RawInvite {
  id: string;
  app_id: string;
  tenant_id: string;
  token_hash: string;
  note: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  used_by_tenant_id: string | null;
}

const toInvite = (r: RawInvite): InviteRow => ({
  id: r.id,
  appId: r.app_id,
  tenantId: r.tenant_id,
  tokenHash: r.token_hash,
  note: r.note,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
  usedByTenantId: r.used_by_tenant_id,
});

/** The statements both invite tables need; `table` is one of two fixed names, never input. */
export function inviteStatements(db: SqliteDb, table: "invite_tokens" | "family_invites") {
  const q = {
    insert: db.prepare<[string, string, string, string, string | null, number, number]>(
      `INSERT INTO ${table} (id, app_id, tenant_id, token_hash, note, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    list: db.prepare<[string, string], RawInvite>(`SELECT * FROM ${table} WHERE app_id = ? AND tenant_id = ? ORDER BY created_at DESC, id DESC`),
    byId: db.prepare<[string, string, string], RawInvite>(`SELECT * FROM ${table} WHERE app_id = ? AND tenant_id = ? AND id = ?`),
    byHash: db.prepare<[string, string], RawInvite>(`SELECT * FROM ${table} WHERE app_id = ? AND token_hash = ?`),
    remove: db.prepare<[string, string, string]>(`DELETE FROM ${table} WHERE app_id = ? AND tenant_id = ? AND id = ? AND used_at IS NULL`),
    /** Single use and expiry in one statement: of two concurrent uses, one changes the row. */
    markUsed: db.prepare<[number, string, string, string, number]>(
      `UPDATE ${table} SET used_at = ?, used_by_tenant_id = ? WHERE app_id = ? AND token_hash = ? AND used_at IS NULL AND expires_at > ?`,
    ),
  };
  return {
    insert: (r: InviteRow) => q.insert.run(r.id, r.appId, r.tenantId, r.tokenHash, r.note, r.createdAt, r.expiresAt),
    list: (appId: string, tenantId: string) => q.list.all(appId, tenantId).map(toInvite),
    findByHash: (appId: string, hash: string) => {
      const r = q.byHash.get(appId, hash);
      return r && toInvite(r);
    },
    remove: (appId: string, tenantId: string, id: string): RemoveOutcome => {
      if (q.remove.run(appId, tenantId, id).changes > 0) return "removed";
      return q.byId.get(appId, tenantId, id) ? "used" : "not_found";
    },
    markUsed: (appId: string, hash: string, usedBy: string, now: number) => q.markUsed.run(now, usedBy, appId, hash, now).changes > 0,
  };
}

export type InvitesRepo = ReturnType<typeof createInvitesRepo>;

export function createInvitesRepo(db: SqliteDb) {
  const s = inviteStatements(db, "invite_tokens");
  // Spent = used, plus unused ones still live; expired unused ones and deleted ones free their slot.
  const spent = db.prepare<[string, string, number], { n: number }>(
    "SELECT COUNT(*) AS n FROM invite_tokens WHERE app_id = ? AND tenant_id = ? AND (used_at IS NOT NULL OR expires_at > ?)",
  );
  const create = db.transaction((row: InviteRow, limit: number | null): boolean => {
    if (limit !== null && spent.get(row.appId, row.tenantId, row.createdAt)!.n >= limit) return false;
    s.insert(row);
    return true;
  });

  return {
    /** Inserts the token unless the creator's quota is spent; the check and insert share one write lock. */
    async create(row: InviteRow, limit: number | null): Promise<boolean> {
      return create.immediate(row, limit);
    },
    /** Newest first. */
    async list(appId: string, tenantId: string): Promise<InviteRow[]> {
      return s.list(appId, tenantId);
    },
    async spent(appId: string, tenantId: string, now: number): Promise<number> {
      return spent.get(appId, tenantId, now)!.n;
    },
    /** Deletes an unused token; a used one stays (it records who joined through it). */
    async remove(appId: string, tenantId: string, id: string): Promise<RemoveOutcome> {
      return s.remove(appId, tenantId, id);
    },
    async findByHash(appId: string, hash: string): Promise<InviteRow | undefined> {
      return s.findByHash(appId, hash);
    },
    /**
     * Marks the token used by `usedBy`. Synchronous: it runs inside the transaction that
     * creates the tenant (tenants.createWithSession), so a lost race rolls the sign-up back.
     */
    useInTransaction(appId: string, hash: string, usedBy: string, now: number): boolean {
      return s.markUsed(appId, hash, usedBy, now);
    },
  };
}
