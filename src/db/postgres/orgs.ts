import type { PgQuery, PgSql, PgTx } from "./connection.ts";
import type { OrgsRepository } from "../repositories.ts";
import type { MemberChange, RoleCheck, MemberOrgRow, OrgInviteRow, OrgJoinOutcome, OrgMemberRow, OrgRow } from "../org-types.ts";
import { stepCall } from "./steps.ts";

/**
 * Every change to an organization's members first locks its row (NO KEY UPDATE: member
 * inserts take key-share locks on it and must not wait), so owner counts and seat checks of
 * one organization take turns across connections and nodes.
 */
const lockOrg = async (tx: PgTx, orgId: string) => (await tx`SELECT 1 FROM orgs WHERE id = ${orgId} FOR NO KEY UPDATE`).length > 0;

export function createPgOrgsRepo(sql: PgSql): OrgsRepository {
  const roleOf = async (q: PgQuery, appId: string, orgId: string, tenantId: string) => {
    const [r] = await q<{ role: string }[]>`SELECT role FROM org_members WHERE app_id = ${appId} AND org_id = ${orgId} AND tenant_id = ${tenantId}`;
    return r?.role;
  };
  const count = async (q: PgQuery, orgId: string) => (await q<{ n: number }[]>`SELECT COUNT(*) AS n FROM org_members WHERE org_id = ${orgId}`)[0]!.n;
  const pending = async (q: PgQuery, orgId: string, now: number) =>
    (await q<{ n: number }[]>`SELECT COUNT(*) AS n FROM org_invites WHERE org_id = ${orgId} AND email IS NOT NULL AND used_at IS NULL AND expires_at > ${now}`)[0]!.n;
  const setRole = (q: PgQuery, appId: string, orgId: string, tenantId: string, role: string) =>
    q`UPDATE org_members SET role = ${role} WHERE app_id = ${appId} AND org_id = ${orgId} AND tenant_id = ${tenantId}`;
  const inviteByHash = async (q: PgQuery, appId: string, hash: string) => {
    const [r] = await q<OrgInviteRow[]>`SELECT * FROM org_invites WHERE app_id = ${appId} AND token_hash = ${hash}`;
    return r;
  };

  /** Under the organization's lock: whether a role the caller decided on has changed since. */
  async function stale(tx: PgTx, appId: string, orgId: string, checks: RoleCheck[]): Promise<boolean> {
    for (const c of checks) if ((await roleOf(tx, appId, orgId, c.tenantId)) !== c.role) return true;
    return false;
  }

  /** An owner stays while another owner remains; anyone else may change. */
  async function lastOwner(tx: PgTx, appId: string, orgId: string, tenantId: string, checks: RoleCheck[] = []): Promise<MemberChange | undefined> {
    if (!(await lockOrg(tx, orgId))) return "not_found";
    if (await stale(tx, appId, orgId, checks)) return "stale";
    const role = await roleOf(tx, appId, orgId, tenantId);
    if (!role) return "not_found";
    if (role === "owner" && (await tx<{ n: number }[]>`SELECT COUNT(*) AS n FROM org_members WHERE org_id = ${orgId} AND role = 'owner'`)[0]!.n <= 1) return "last_owner";
    return undefined;
  }

  async function joinIn(tx: PgTx, appId: string, hash: string, tenantId: string, email: string, limit: number | null, now: number): Promise<OrgJoinOutcome> {
    const found = await inviteByHash(tx, appId, hash);
    if (!found || !(await lockOrg(tx, found.orgId))) return { kind: "invalid" };
    // Read again under the lock: a join that held it may have used the invite.
    const invite = (await inviteByHash(tx, appId, hash))!;
    if (!invite || invite.expiresAt <= now || (invite.email !== null && invite.usedAt !== null)) return { kind: "invalid" };
    if (invite.email !== null && invite.email !== email) return { kind: "wrong_email" };
    if (await roleOf(tx, appId, invite.orgId, tenantId)) return { kind: "already_member" };
    // An email invite holds its own seat among the pending ones; a link takes a free seat.
    const taken = (await count(tx, invite.orgId)) + (invite.email === null ? await pending(tx, invite.orgId, now) : 0);
    if (limit !== null && taken >= limit) return { kind: "full" };
    if (invite.email !== null) await tx`UPDATE org_invites SET used_at = ${now}, used_by_tenant_id = ${tenantId}, uses = 1 WHERE id = ${invite.id}`;
    else await tx`UPDATE org_invites SET uses = uses + 1 WHERE id = ${invite.id}`;
    await tx`INSERT INTO org_members (org_id, tenant_id, app_id, role, joined_at) VALUES (${invite.orgId}, ${tenantId}, ${appId}, ${invite.role}, ${now})`;
    return { kind: "joined", orgId: invite.orgId, role: invite.role };
  }

  return {
    create: (org, ownerId, cap) =>
      sql.begin(async (tx) => {
        // The owner's row serializes its creations, so concurrent ones cannot pass the cap.
        await tx`SELECT 1 FROM tenants WHERE app_id = ${org.appId} AND id = ${ownerId} FOR NO KEY UPDATE`;
        if (cap !== null && (await tx<{ n: number }[]>`SELECT COUNT(*) AS n FROM org_members WHERE app_id = ${org.appId} AND tenant_id = ${ownerId} AND role = 'owner'`)[0]!.n >= cap) return false;
        await tx`INSERT INTO orgs (id, app_id, name, kind, created_at, updated_at) VALUES (${org.id}, ${org.appId}, ${org.name}, ${org.kind}, ${org.createdAt}, ${org.updatedAt})`;
        await tx`INSERT INTO org_members (org_id, tenant_id, app_id, role, joined_at) VALUES (${org.id}, ${ownerId}, ${org.appId}, 'owner', ${org.createdAt})`;
        return true;
      }),
    async forTenant(appId, tenantId) {
      return [...(await sql<MemberOrgRow[]>`SELECT o.*, m.role FROM org_members m JOIN orgs o ON o.id = m.org_id
        WHERE m.app_id = ${appId} AND m.tenant_id = ${tenantId} ORDER BY o.created_at, o.id COLLATE "C"`)];
    },
    async asMember(appId, orgId, tenantId) {
      const [r] = await sql<MemberOrgRow[]>`SELECT o.*, m.role FROM org_members m JOIN orgs o ON o.id = m.org_id
        WHERE m.app_id = ${appId} AND m.org_id = ${orgId} AND m.tenant_id = ${tenantId}`;
      return r;
    },
    async byId(appId, orgId) {
      const [r] = await sql<OrgRow[]>`SELECT * FROM orgs WHERE app_id = ${appId} AND id = ${orgId}`;
      return r;
    },
    async list(appId, limit, offset) {
      const orgs = await sql<(OrgRow & { members: number })[]>`SELECT o.*, (SELECT COUNT(*) FROM org_members m WHERE m.org_id = o.id) AS members
        FROM orgs o WHERE o.app_id = ${appId} ORDER BY o.created_at DESC, o.id COLLATE "C" DESC LIMIT ${limit} OFFSET ${offset}`;
      const [total] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM orgs WHERE app_id = ${appId}`;
      return { orgs: [...orgs], total: total!.n };
    },
    async rename(appId, orgId, name, now) {
      const [r] = await sql<OrgRow[]>`UPDATE orgs SET name = ${name}, updated_at = ${now} WHERE app_id = ${appId} AND id = ${orgId} RETURNING *`;
      return r;
    },
    async remove(appId, orgId) {
      return (await sql`DELETE FROM orgs WHERE app_id = ${appId} AND id = ${orgId}`).count > 0;
    },
    // The page is cut from org_members alone, then joined for the emails: a large organization
    // costs one page of tenant lookups, not one per member after the cursor.
    async members(appId, orgId, limit, after) {
      const from = after ? sql`AND (joined_at, tenant_id COLLATE "C") > (${after.joinedAt}, ${after.tenantId} COLLATE "C")` : sql``;
      return [
        ...(await sql<OrgMemberRow[]>`SELECT m.tenant_id, t.email, m.role, m.joined_at
          FROM (SELECT tenant_id, role, joined_at FROM org_members WHERE org_id = ${orgId} AND app_id = ${appId} ${from}
                ORDER BY joined_at, tenant_id COLLATE "C" LIMIT ${limit}) m
          JOIN tenants t ON t.id = m.tenant_id ORDER BY m.joined_at, m.tenant_id COLLATE "C"`),
      ];
    },
    async member(appId, orgId, tenantId) {
      const [r] = await sql<OrgMemberRow[]>`SELECT m.tenant_id, t.email, m.role, m.joined_at FROM org_members m JOIN tenants t ON t.id = m.tenant_id
        WHERE m.app_id = ${appId} AND m.org_id = ${orgId} AND m.tenant_id = ${tenantId}`;
      return r;
    },
    setRole: (appId, orgId, tenantId, role, checks = []) =>
      sql.begin(async (tx): Promise<MemberChange> => {
        const refused =
          role === "owner"
            ? !(await lockOrg(tx, orgId)) || !(await roleOf(tx, appId, orgId, tenantId)) ? "not_found" : (await stale(tx, appId, orgId, checks)) ? "stale" : undefined
            : await lastOwner(tx, appId, orgId, tenantId, checks);
        if (refused) return refused;
        await setRole(tx, appId, orgId, tenantId, role);
        return "changed";
      }),
    removeMember: (appId, orgId, tenantId, checks = []) =>
      sql.begin(async (tx): Promise<MemberChange> => {
        const refused = await lastOwner(tx, appId, orgId, tenantId, checks);
        if (refused) return refused;
        await tx`DELETE FROM org_members WHERE app_id = ${appId} AND org_id = ${orgId} AND tenant_id = ${tenantId}`;
        return "changed";
      }),
    transfer: (appId, orgId, from, to) =>
      sql.begin(async (tx): Promise<MemberChange> => {
        if (!(await lockOrg(tx, orgId)) || (await roleOf(tx, appId, orgId, from)) !== "owner" || !(await roleOf(tx, appId, orgId, to))) return "not_found";
        await setRole(tx, appId, orgId, to, "owner");
        if (from !== to) await setRole(tx, appId, orgId, from, "admin");
        return "changed";
      }),
    handOver: (appId, tenantId) =>
      sql.begin(async (tx) => {
        const owned = await tx<{ orgId: string }[]>`SELECT org_id FROM org_members WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND role = 'owner' ORDER BY org_id COLLATE "C"`;
        const out: { orgId: string; newOwnerId: string | null }[] = [];
        for (const { orgId } of owned) {
          await lockOrg(tx, orgId);
          const [other] = await tx`SELECT 1 FROM org_members WHERE org_id = ${orgId} AND role = 'owner' AND tenant_id <> ${tenantId}`;
          if (other) continue;
          const [next] = await tx<{ tenantId: string }[]>`SELECT tenant_id FROM org_members WHERE org_id = ${orgId} AND tenant_id <> ${tenantId}
            ORDER BY CASE role WHEN 'admin' THEN 0 ELSE 1 END, joined_at, tenant_id COLLATE "C" LIMIT 1`;
          if (next) await setRole(tx, appId, orgId, next.tenantId, "owner");
          else await tx`DELETE FROM orgs WHERE app_id = ${appId} AND id = ${orgId}`;
          out.push({ orgId, newOwnerId: next?.tenantId ?? null });
        }
        return out;
      }),
    async seatCounts(_appId, orgId, now) {
      return { members: await count(sql, orgId), pending: await pending(sql, orgId, now) };
    },
    createInvite: (row, limit) =>
      sql.begin(async (tx) => {
        if (!(await lockOrg(tx, row.orgId))) return false;
        if (row.email !== null && limit !== null && (await count(tx, row.orgId)) + (await pending(tx, row.orgId, row.createdAt)) >= limit) return false;
        await tx`INSERT INTO org_invites (id, org_id, app_id, created_by, email, role, token_hash, created_at, expires_at)
          VALUES (${row.id}, ${row.orgId}, ${row.appId}, ${row.createdBy}, ${row.email}, ${row.role}, ${row.tokenHash}, ${row.createdAt}, ${row.expiresAt})`;
        return true;
      }),
    async listInvites(appId, orgId) {
      return [...(await sql<OrgInviteRow[]>`SELECT * FROM org_invites WHERE app_id = ${appId} AND org_id = ${orgId} ORDER BY created_at DESC, id COLLATE "C" DESC`)];
    },
    findInviteByHash: (appId, hash) => inviteByHash(sql, appId, hash),
    async revokeInvite(appId, orgId, id) {
      const gone = await sql`DELETE FROM org_invites WHERE app_id = ${appId} AND org_id = ${orgId} AND id = ${id} AND (email IS NULL OR used_at IS NULL)`;
      if (gone.count > 0) return "removed";
      const [r] = await sql`SELECT 1 FROM org_invites WHERE app_id = ${appId} AND org_id = ${orgId} AND id = ${id}`;
      return r ? "used" : "not_found";
    },
    join: (appId, hash, tenantId, email, limit, now) => sql.begin((tx) => joinIn(tx, appId, hash, tenantId, email, limit, now)),
    joinInTransaction: (appId, hash, tenantId, email, limit, now) =>
      stepCall<OrgJoinOutcome>("orgs.join", { kind: "joined", orgId: "", role: "" }, (tx) => joinIn(tx, appId, hash, tenantId, email, limit, now)),
  };
}
