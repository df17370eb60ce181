import type { PgQuery, PgSql, PgTx } from "./connection.ts";
import type { FamilyRepository } from "../repositories.ts";
import type { FamilyMemberRow, JoinOutcome } from "../types.ts";
import { lockTenant, pgInviteStatements } from "./invites.ts";
import { stepCall } from "./steps.ts";

export function createPgFamilyRepo(sql: PgSql): FamilyRepository {
  const inv = pgInviteStatements("family_invites");
  const members = async (q: PgQuery, appId: string, ownerId: string) => {
    const [r] = await q<{ n: number }[]>`SELECT COUNT(*) AS n FROM family_members WHERE app_id = ${appId} AND owner_tenant_id = ${ownerId}`;
    return r!.n;
  };
  const pending = async (q: PgQuery, appId: string, ownerId: string, now: number) => {
    const [r] = await q<{ n: number }[]>`SELECT COUNT(*) AS n FROM family_invites
      WHERE app_id = ${appId} AND tenant_id = ${ownerId} AND used_at IS NULL AND expires_at > ${now}`;
    return r!.n;
  };
  const setParent = (q: PgQuery, appId: string, memberId: string, parent: string | null) =>
    q`UPDATE tenants SET parent_tenant_id = ${parent} WHERE app_id = ${appId} AND id = ${memberId}`;

  /**
   * Seat check, single use of the invite, membership row and parent column: all or nothing.
   * The owner's row is locked first, so joins (and invites) of one family take turns and
   * the seat count cannot be passed by concurrent joins.
   */
  async function joinIn(tx: PgTx, appId: string, hash: string, memberId: string, limit: number | null, now: number): Promise<JoinOutcome> {
    const invite = await inv.findByHash(tx, appId, hash);
    if (!invite || invite.usedAt !== null || invite.expiresAt <= now) return { kind: "invalid" };
    const owner = invite.tenantId;
    if (owner === memberId) return { kind: "own_invite" };
    const [ownerRow] = await tx<{ parentTenantId: string | null }[]>`SELECT parent_tenant_id FROM tenants WHERE app_id = ${appId} AND id = ${owner} FOR NO KEY UPDATE`;
    // An owner who joined another family since inviting cannot bring members in (no nesting).
    if (!ownerRow || ownerRow.parentTenantId) return { kind: "invalid" };
    if (limit !== null && (await members(tx, appId, owner)) >= limit) return { kind: "full" };
    if (!(await inv.markUsed(tx, appId, hash, memberId, now))) return { kind: "invalid" };
    await tx`INSERT INTO family_members (tenant_id, owner_tenant_id, app_id, joined_at) VALUES (${memberId}, ${owner}, ${appId}, ${now})`;
    await setParent(tx, appId, memberId, owner);
    // A member cannot act as an owner: its own unused invites would wait, unrevocable, for the day it leaves.
    await tx`DELETE FROM family_invites WHERE app_id = ${appId} AND tenant_id = ${memberId} AND used_at IS NULL`;
    return { kind: "joined", ownerTenantId: owner };
  }

  const detach = (appId: string, memberId: string, ownerId: string | null) =>
    sql.begin(async (tx) => {
      const gone =
        ownerId === null
          ? await tx`DELETE FROM family_members WHERE app_id = ${appId} AND tenant_id = ${memberId}`
          : await tx`DELETE FROM family_members WHERE app_id = ${appId} AND tenant_id = ${memberId} AND owner_tenant_id = ${ownerId}`;
      if (gone.count === 0) return false;
      await setParent(tx, appId, memberId, null);
      return true;
    });

  return {
    async createInvite(row, limit) {
      return sql.begin(async (tx) => {
        await lockTenant(tx, row.appId, row.tenantId);
        if (limit !== null && (await members(tx, row.appId, row.tenantId)) + (await pending(tx, row.appId, row.tenantId, row.createdAt)) >= limit) return false;
        await inv.insert(tx, row);
        return true;
      });
    },
    listInvites: (appId, ownerId) => inv.list(sql, appId, ownerId),
    findInviteByHash: (appId, hash) => inv.findByHash(sql, appId, hash),
    revokeInvite: (appId, ownerId, id) => inv.remove(sql, appId, ownerId, id),
    async seatCounts(appId, ownerId, now) {
      return { members: await members(sql, appId, ownerId), pending: await pending(sql, appId, ownerId, now) };
    },
    async members(appId, ownerId) {
      return [
        ...(await sql<FamilyMemberRow[]>`SELECT m.tenant_id, t.email, m.joined_at FROM family_members m JOIN tenants t ON t.id = m.tenant_id
          WHERE m.app_id = ${appId} AND m.owner_tenant_id = ${ownerId} ORDER BY m.joined_at, m.tenant_id COLLATE "C"`),
      ];
    },
    async membership(appId, memberId) {
      const [r] = await sql<{ ownerTenantId: string; ownerEmail: string; joinedAt: number; rank: number }[]>`
        SELECT m.owner_tenant_id, o.email AS owner_email, m.joined_at,
          (SELECT COUNT(*) FROM family_members x WHERE x.owner_tenant_id = m.owner_tenant_id
             AND (x.joined_at < m.joined_at OR (x.joined_at = m.joined_at AND x.tenant_id COLLATE "C" < m.tenant_id COLLATE "C"))) AS rank
        FROM family_members m JOIN tenants o ON o.id = m.owner_tenant_id
        WHERE m.app_id = ${appId} AND m.tenant_id = ${memberId}`;
      return r;
    },
    async join(appId, hash, memberId, limit, now) {
      return sql.begin(async (tx) => {
        // Both rows, in id order: A joining B's family while B joins A's cannot deadlock.
        const invite = await inv.findByHash(tx, appId, hash);
        const ids = [...new Set([memberId, invite?.tenantId ?? memberId])].sort();
        await tx`SELECT 1 FROM tenants WHERE app_id = ${appId} AND id IN ${tx(ids)} ORDER BY id COLLATE "C" FOR NO KEY UPDATE`;
        const [isMember] = await tx`SELECT 1 FROM family_members WHERE tenant_id = ${memberId}`;
        if (isMember) return { kind: "already_member" as const };
        if ((await members(tx, appId, memberId)) > 0) return { kind: "has_members" as const };
        return joinIn(tx, appId, hash, memberId, limit, now);
      });
    },
    joinInTransaction(appId, hash, memberId, limit, now) {
      return stepCall<JoinOutcome>("family.join", { kind: "joined", ownerTenantId: "" }, (tx) => joinIn(tx, appId, hash, memberId, limit, now));
    },
    leave: (appId, memberId) => detach(appId, memberId, null),
    removeMember: (appId, ownerId, memberId) => detach(appId, memberId, ownerId),
  };
}
