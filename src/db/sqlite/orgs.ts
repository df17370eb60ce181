import type { SqliteDb } from "./connection.ts";
import type { OrgsRepository } from "../repositories.ts";
import type { RemoveOutcome } from "../types.ts";
import type { MemberChange, RoleCheck, MemberOrgRow, OrgInviteRow, OrgJoinOutcome, OrgMemberRow, OrgRow } from "../org-types.ts";

const ORG = "o.id, o.app_id AS appId, o.name, o.kind, o.created_at AS createdAt, o.updated_at AS updatedAt";
const MEMBER = "m.tenant_id AS tenantId, t.email, m.role, m.joined_at AS joinedAt";
const INVITE = `id, org_id AS orgId, app_id AS appId, created_by AS createdBy, email, role, token_hash AS tokenHash,
  created_at AS createdAt, expires_at AS expiresAt, used_at AS usedAt, used_by_tenant_id AS usedByTenantId, uses`;

export function createOrgsRepo(db: SqliteDb): OrgsRepository {
  const q = {
    insertOrg: db.prepare<[string, string, string, string, number, number]>("INSERT INTO orgs (id, app_id, name, kind, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)"),
    insertMember: db.prepare<[string, string, string, string, number]>("INSERT INTO org_members (org_id, tenant_id, app_id, role, joined_at) VALUES (?, ?, ?, ?, ?)"),
    forTenant: db.prepare<[string, string], MemberOrgRow>(
      `SELECT ${ORG}, m.role FROM org_members m JOIN orgs o ON o.id = m.org_id WHERE m.app_id = ? AND m.tenant_id = ? ORDER BY o.created_at, o.id`,
    ),
    asMember: db.prepare<[string, string, string], MemberOrgRow>(
      `SELECT ${ORG}, m.role FROM org_members m JOIN orgs o ON o.id = m.org_id WHERE m.app_id = ? AND m.org_id = ? AND m.tenant_id = ?`,
    ),
    byId: db.prepare<[string, string], OrgRow>(`SELECT ${ORG} FROM orgs o WHERE o.app_id = ? AND o.id = ?`),
    page: db.prepare<[string, number, number], OrgRow & { members: number }>(
      `SELECT ${ORG}, (SELECT COUNT(*) FROM org_members m WHERE m.org_id = o.id) AS members FROM orgs o WHERE o.app_id = ? ORDER BY o.created_at DESC, o.id DESC LIMIT ? OFFSET ?`,
    ),
    total: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM orgs WHERE app_id = ?"),
    rename: db.prepare<[string, number, string, string]>("UPDATE orgs SET name = ?, updated_at = ? WHERE app_id = ? AND id = ?"),
    remove: db.prepare<[string, string]>("DELETE FROM orgs WHERE app_id = ? AND id = ?"),
    firstMembers: db.prepare<[string, string, number], OrgMemberRow>(
      `SELECT ${MEMBER} FROM org_members m JOIN tenants t ON t.id = m.tenant_id WHERE m.app_id = ? AND m.org_id = ? ORDER BY m.joined_at, m.tenant_id LIMIT ?`,
    ),
    membersAfter: db.prepare<[string, string, number, string, number], OrgMemberRow>(
      `SELECT ${MEMBER} FROM org_members m JOIN tenants t ON t.id = m.tenant_id
       WHERE m.app_id = ? AND m.org_id = ? AND (m.joined_at, m.tenant_id) > (?, ?) ORDER BY m.joined_at, m.tenant_id LIMIT ?`,
    ),
    member: db.prepare<[string, string, string], OrgMemberRow>(
      `SELECT ${MEMBER} FROM org_members m JOIN tenants t ON t.id = m.tenant_id WHERE m.app_id = ? AND m.org_id = ? AND m.tenant_id = ?`,
    ),
    owned: db.prepare<[string, string], { n: number }>("SELECT COUNT(*) AS n FROM org_members WHERE app_id = ? AND tenant_id = ? AND role = 'owner'"),
    roleOf: db.prepare<[string, string, string], { role: string }>("SELECT role FROM org_members WHERE app_id = ? AND org_id = ? AND tenant_id = ?"),
    owners: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM org_members WHERE org_id = ? AND role = 'owner'"),
    setRole: db.prepare<[string, string, string, string]>("UPDATE org_members SET role = ? WHERE app_id = ? AND org_id = ? AND tenant_id = ?"),
    removeMember: db.prepare<[string, string, string]>("DELETE FROM org_members WHERE app_id = ? AND org_id = ? AND tenant_id = ?"),
    soleOwned: db.prepare<[string, string], { orgId: string }>(
      `SELECT m.org_id AS orgId FROM org_members m WHERE m.app_id = ? AND m.tenant_id = ? AND m.role = 'owner'
         AND NOT EXISTS (SELECT 1 FROM org_members x WHERE x.org_id = m.org_id AND x.role = 'owner' AND x.tenant_id <> m.tenant_id)`,
    ),
    successor: db.prepare<[string, string], { tenantId: string }>(
      `SELECT tenant_id AS tenantId FROM org_members WHERE org_id = ? AND tenant_id <> ?
       ORDER BY CASE role WHEN 'admin' THEN 0 ELSE 1 END, joined_at, tenant_id LIMIT 1`,
    ),
    memberCount: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM org_members WHERE org_id = ?"),
    pending: db.prepare<[string, number], { n: number }>(
      "SELECT COUNT(*) AS n FROM org_invites WHERE org_id = ? AND email IS NOT NULL AND used_at IS NULL AND expires_at > ?",
    ),
    insertInvite: db.prepare<[string, string, string, string | null, string | null, string, string, number, number]>(
      "INSERT INTO org_invites (id, org_id, app_id, created_by, email, role, token_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    listInvites: db.prepare<[string, string], OrgInviteRow>(`SELECT ${INVITE} FROM org_invites WHERE app_id = ? AND org_id = ? ORDER BY created_at DESC, id DESC`),
    inviteByHash: db.prepare<[string, string], OrgInviteRow>(`SELECT ${INVITE} FROM org_invites WHERE app_id = ? AND token_hash = ?`),
    revokeInvite: db.prepare<[string, string, string]>("DELETE FROM org_invites WHERE app_id = ? AND org_id = ? AND id = ? AND (email IS NULL OR used_at IS NULL)"),
    inviteExists: db.prepare<[string, string, string], { n: number }>("SELECT COUNT(*) AS n FROM org_invites WHERE app_id = ? AND org_id = ? AND id = ?"),
    useEmailInvite: db.prepare<[number, string, string, number]>(
      "UPDATE org_invites SET used_at = ?, used_by_tenant_id = ?, uses = 1 WHERE id = ? AND used_at IS NULL AND expires_at > ?",
    ),
    useLinkInvite: db.prepare<[string, number]>("UPDATE org_invites SET uses = uses + 1 WHERE id = ? AND expires_at > ?"),
  };

  const create = db.transaction((org: OrgRow, ownerId: string, cap: number | null) => {
    if (cap !== null && q.owned.get(org.appId, ownerId)!.n >= cap) return false;
    q.insertOrg.run(org.id, org.appId, org.name, org.kind, org.createdAt, org.updatedAt);
    q.insertMember.run(org.id, ownerId, org.appId, "owner", org.createdAt);
    return true;
  });

  /** An owner stays while another owner remains; anyone else may change. */
  const lastOwner = (appId: string, orgId: string, tenantId: string): MemberChange | undefined => {
    const current = q.roleOf.get(appId, orgId, tenantId);
    if (!current) return "not_found";
    if (current.role === "owner" && q.owners.get(orgId)!.n <= 1) return "last_owner";
    return undefined;
  };

  const stale = (appId: string, orgId: string, checks: RoleCheck[]) => checks.some((c) => q.roleOf.get(appId, orgId, c.tenantId)?.role !== c.role);

  const setRole = db.transaction((appId: string, orgId: string, tenantId: string, role: string, checks: RoleCheck[]): MemberChange => {
    if (stale(appId, orgId, checks)) return "stale";
    const refused = role === "owner" ? (q.roleOf.get(appId, orgId, tenantId) ? undefined : "not_found") : lastOwner(appId, orgId, tenantId);
    if (refused) return refused;
    q.setRole.run(role, appId, orgId, tenantId);
    return "changed";
  });

  const removeMember = db.transaction((appId: string, orgId: string, tenantId: string, checks: RoleCheck[]): MemberChange => {
    if (stale(appId, orgId, checks)) return "stale";
    const refused = lastOwner(appId, orgId, tenantId);
    if (refused) return refused;
    q.removeMember.run(appId, orgId, tenantId);
    return "changed";
  });

  const transfer = db.transaction((appId: string, orgId: string, from: string, to: string): MemberChange => {
    if (q.roleOf.get(appId, orgId, from)?.role !== "owner" || !q.roleOf.get(appId, orgId, to)) return "not_found";
    q.setRole.run("owner", appId, orgId, to);
    if (from !== to) q.setRole.run("admin", appId, orgId, from);
    return "changed";
  });

  const handOver = db.transaction((appId: string, tenantId: string) =>
    q.soleOwned.all(appId, tenantId).map(({ orgId }) => {
      const next = q.successor.get(orgId, tenantId);
      if (next) q.setRole.run("owner", appId, orgId, next.tenantId);
      else q.remove.run(appId, orgId);
      return { orgId, newOwnerId: next?.tenantId ?? null };
    }),
  );

  const createInvite = db.transaction((row: OrgInviteRow, limit: number | null): boolean => {
    if (row.email !== null && limit !== null && q.memberCount.get(row.orgId)!.n + q.pending.get(row.orgId, row.createdAt)!.n >= limit) return false;
    q.insertInvite.run(row.id, row.orgId, row.appId, row.createdBy, row.email, row.role, row.tokenHash, row.createdAt, row.expiresAt);
    return true;
  });

  function joinInTransaction(appId: string, hash: string, tenantId: string, email: string, limit: number | null, now: number): OrgJoinOutcome {
    const invite = q.inviteByHash.get(appId, hash);
    if (!invite || invite.expiresAt <= now || (invite.email !== null && invite.usedAt !== null)) return { kind: "invalid" };
    if (invite.email !== null && invite.email !== email) return { kind: "wrong_email" };
    if (q.roleOf.get(appId, invite.orgId, tenantId)) return { kind: "already_member" };
    // An email invite holds its own seat among the pending ones; a link takes a free seat.
    const taken = q.memberCount.get(invite.orgId)!.n + (invite.email === null ? q.pending.get(invite.orgId, now)!.n : 0);
    if (limit !== null && taken >= limit) return { kind: "full" };
    const used = invite.email !== null ? q.useEmailInvite.run(now, tenantId, invite.id, now) : q.useLinkInvite.run(invite.id, now);
    if (used.changes === 0) return { kind: "invalid" };
    q.insertMember.run(invite.orgId, tenantId, appId, invite.role, now);
    return { kind: "joined", orgId: invite.orgId, role: invite.role };
  }
  const join = db.transaction(joinInTransaction);

  return {
    async create(org, ownerId, cap) {
      return create.immediate(org, ownerId, cap);
    },
    async forTenant(appId, tenantId) {
      return q.forTenant.all(appId, tenantId);
    },
    async asMember(appId, orgId, tenantId) {
      return q.asMember.get(appId, orgId, tenantId);
    },
    async byId(appId, orgId) {
      return q.byId.get(appId, orgId);
    },
    async list(appId, limit, offset) {
      return { orgs: q.page.all(appId, limit, offset), total: q.total.get(appId)!.n };
    },
    async rename(appId, orgId, name, now) {
      if (q.rename.run(name, now, appId, orgId).changes === 0) return undefined;
      return q.byId.get(appId, orgId);
    },
    async remove(appId, orgId) {
      return q.remove.run(appId, orgId).changes > 0;
    },
    async members(appId, orgId, limit, after) {
      return after ? q.membersAfter.all(appId, orgId, after.joinedAt, after.tenantId, limit) : q.firstMembers.all(appId, orgId, limit);
    },
    async member(appId, orgId, tenantId) {
      return q.member.get(appId, orgId, tenantId);
    },
    async setRole(appId, orgId, tenantId, role, checks = []) {
      return setRole.immediate(appId, orgId, tenantId, role, checks);
    },
    async removeMember(appId, orgId, tenantId, checks = []) {
      return removeMember.immediate(appId, orgId, tenantId, checks);
    },
    async transfer(appId, orgId, from, to) {
      return transfer.immediate(appId, orgId, from, to);
    },
    async handOver(appId, tenantId) {
      return handOver.immediate(appId, tenantId);
    },
    async seatCounts(_appId, orgId, now) {
      return { members: q.memberCount.get(orgId)!.n, pending: q.pending.get(orgId, now)!.n };
    },
    async createInvite(row, limit) {
      return createInvite.immediate(row, limit);
    },
    async listInvites(appId, orgId) {
      return q.listInvites.all(appId, orgId);
    },
    async findInviteByHash(appId, hash) {
      return q.inviteByHash.get(appId, hash);
    },
    async revokeInvite(appId, orgId, id): Promise<RemoveOutcome> {
      if (q.revokeInvite.run(appId, orgId, id).changes > 0) return "removed";
      return q.inviteExists.get(appId, orgId, id)!.n > 0 ? "used" : "not_found";
    },
    async join(appId, hash, tenantId, email, limit, now) {
      return join.immediate(appId, hash, tenantId, email, limit, now);
    },
    joinInTransaction,
  };
}
