import type { SqliteDb } from "./connection.ts";
import { inviteStatements } from "./invites.ts";
import type { FamilyMemberRow, InviteRow, JoinOutcome, Membership, RemoveOutcome, SeatCounts } from "../types.ts";

export type FamilyRepo = ReturnType<typeof createFamilyRepo>;

export function createFamilyRepo(db: SqliteDb) {
  const inv = inviteStatements(db, "family_invites");
  const q = {
    members: db.prepare<[string, string], { n: number }>("SELECT COUNT(*) AS n FROM family_members WHERE app_id = ? AND owner_tenant_id = ?"),
    pending: db.prepare<[string, string, number], { n: number }>(
      "SELECT COUNT(*) AS n FROM family_invites WHERE app_id = ? AND tenant_id = ? AND used_at IS NULL AND expires_at > ?",
    ),
    isMember: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM family_members WHERE tenant_id = ?"),
    ownerIsMember: db.prepare<[string], { parent: string | null }>("SELECT parent_tenant_id AS parent FROM tenants WHERE id = ?"),
    dropPendingOf: db.prepare<[string, string]>("DELETE FROM family_invites WHERE app_id = ? AND tenant_id = ? AND used_at IS NULL"),
    insertMember: db.prepare<[string, string, string, number]>("INSERT INTO family_members (tenant_id, owner_tenant_id, app_id, joined_at) VALUES (?, ?, ?, ?)"),
    setParent: db.prepare<[string | null, string, string]>("UPDATE tenants SET parent_tenant_id = ? WHERE app_id = ? AND id = ?"),
    removeMember: db.prepare<[string, string, string]>("DELETE FROM family_members WHERE app_id = ? AND tenant_id = ? AND owner_tenant_id = ?"),
    leave: db.prepare<[string, string]>("DELETE FROM family_members WHERE app_id = ? AND tenant_id = ?"),
    list: db.prepare<[string, string], { tenant_id: string; email: string; joined_at: number }>(
      `SELECT m.tenant_id, t.email, m.joined_at FROM family_members m JOIN tenants t ON t.id = m.tenant_id
       WHERE m.app_id = ? AND m.owner_tenant_id = ? ORDER BY m.joined_at, m.tenant_id`,
    ),
    membership: db.prepare<[string, string], { owner_tenant_id: string; email: string; joined_at: number; rank: number }>(
      `SELECT m.owner_tenant_id, o.email, m.joined_at,
         (SELECT COUNT(*) FROM family_members x WHERE x.owner_tenant_id = m.owner_tenant_id
            AND (x.joined_at < m.joined_at OR (x.joined_at = m.joined_at AND x.tenant_id < m.tenant_id))) AS rank
       FROM family_members m JOIN tenants o ON o.id = m.owner_tenant_id
       WHERE m.app_id = ? AND m.tenant_id = ?`,
    ),
  };

  const createInvite = db.transaction((row: InviteRow, limit: number | null): boolean => {
    if (limit !== null && q.members.get(row.appId, row.tenantId)!.n + q.pending.get(row.appId, row.tenantId, row.createdAt)!.n >= limit) return false;
    inv.insert(row);
    return true;
  });

  /** Seat check, single use of the invite, membership row and parent column: all or nothing. */
  function joinInTransaction(appId: string, hash: string, memberId: string, limit: number | null, now: number): JoinOutcome {
    const invite = inv.findByHash(appId, hash);
    if (!invite || invite.usedAt !== null || invite.expiresAt <= now) return { kind: "invalid" };
    const owner = invite.tenantId;
    if (owner === memberId) return { kind: "own_invite" };
    // An owner who joined another family since inviting cannot bring members in (no nesting).
    if (q.ownerIsMember.get(owner)?.parent) return { kind: "invalid" };
    if (limit !== null && q.members.get(appId, owner)!.n >= limit) return { kind: "full" };
    if (!inv.markUsed(appId, hash, memberId, now)) return { kind: "invalid" };
    q.insertMember.run(memberId, owner, appId, now);
    q.setParent.run(owner, appId, memberId);
    // A member cannot act as an owner: its own unused invites would wait, unrevocable, for
    // the day it leaves. They go now.
    q.dropPendingOf.run(appId, memberId);
    return { kind: "joined", ownerTenantId: owner };
  }

  const joinExisting = db.transaction((appId: string, hash: string, memberId: string, limit: number | null, now: number): JoinOutcome => {
    if (q.isMember.get(memberId)!.n > 0) return { kind: "already_member" };
    if (q.members.get(appId, memberId)!.n > 0) return { kind: "has_members" };
    return joinInTransaction(appId, hash, memberId, limit, now);
  });

  const detach = db.transaction((appId: string, memberId: string, ownerId: string | null): boolean => {
    const gone = ownerId === null ? q.leave.run(appId, memberId) : q.removeMember.run(appId, memberId, ownerId);
    if (gone.changes === 0) return false;
    q.setParent.run(null, appId, memberId);
    return true;
  });

  return {
    /** Inserts the invite unless members plus pending invites already fill `limit` seats. */
    async createInvite(row: InviteRow, limit: number | null): Promise<boolean> {
      return createInvite.immediate(row, limit);
    },
    async listInvites(appId: string, ownerId: string): Promise<InviteRow[]> {
      return inv.list(appId, ownerId);
    },
    async findInviteByHash(appId: string, hash: string): Promise<InviteRow | undefined> {
      return inv.findByHash(appId, hash);
    },
    /** Deletes an unused invite; a used one stays as the record of who joined. */
    async revokeInvite(appId: string, ownerId: string, id: string): Promise<RemoveOutcome> {
      return inv.remove(appId, ownerId, id);
    },
    async seatCounts(appId: string, ownerId: string, now: number): Promise<SeatCounts> {
      return { members: q.members.get(appId, ownerId)!.n, pending: q.pending.get(appId, ownerId, now)!.n };
    },
    /** Members by join order (earliest first). */
    async members(appId: string, ownerId: string): Promise<FamilyMemberRow[]> {
      return q.list.all(appId, ownerId).map((r) => ({ tenantId: r.tenant_id, email: r.email, joinedAt: r.joined_at }));
    },
    async membership(appId: string, memberId: string): Promise<Membership | undefined> {
      const r = q.membership.get(appId, memberId);
      return r && { ownerTenantId: r.owner_tenant_id, ownerEmail: r.email, joinedAt: r.joined_at, rank: r.rank };
    },
    /** An existing tenant joins through the invite (replace-with-family). */
    async join(appId: string, hash: string, memberId: string, limit: number | null, now: number): Promise<JoinOutcome> {
      return joinExisting.immediate(appId, hash, memberId, limit, now);
    },
    /** Synchronous: for the transaction that creates the member's tenant row (sign-up). */
    joinInTransaction,
    async leave(appId: string, memberId: string): Promise<boolean> {
      return detach.immediate(appId, memberId, null);
    },
    async removeMember(appId: string, ownerId: string, memberId: string): Promise<boolean> {
      return detach.immediate(appId, memberId, ownerId);
    },
  };
}
