import type { PgSql } from "./connection.ts";
import type { SessionsRepository } from "../repositories.ts";
import type { SessionState } from "../types.ts";
import { insertSession } from "./tenants.ts";

export function createPgSessionsRepo(sql: PgSql): SessionsRepository {
  return {
    async create(tenantId, appId, s) {
      await sql.begin((tx) => insertSession(tx, tenantId, appId, s));
    },
    async state(sessionId) {
      const [r] = await sql<SessionState[]>`SELECT id, tenant_id, app_id, expires_at, ended_at FROM sessions WHERE id = ${sessionId}`;
      return r;
    },
    async rotate(oldHash, next) {
      // The common case, a live session's current token, is one autocommitted statement: the
      // token's row lock makes concurrent refreshes of it take turns, and the second finds it
      // rotated, rotates nothing and goes on to the transaction below, which says why.
      const [rotated] = await sql<(SessionState & { parentTenantId: string | null })[]>`
        WITH rt AS (
          UPDATE refresh_tokens r SET rotated_at = ${next.now}, successor_hash = ${next.hash}
          FROM sessions s JOIN tenants t ON t.id = s.tenant_id
          WHERE r.token_hash = ${oldHash} AND r.rotated_at IS NULL AND s.id = r.session_id
            AND s.app_id = ${next.appId} AND s.ended_at IS NULL AND s.expires_at > ${next.now}
          RETURNING s.id, s.tenant_id, s.app_id, s.ended_at, t.parent_tenant_id
        ), successor AS (
          INSERT INTO refresh_tokens (token_hash, session_id, created_at) SELECT ${next.hash}, id, ${next.now} FROM rt
        ), extended AS (
          UPDATE sessions SET expires_at = ${next.expiresAt} WHERE id IN (SELECT id FROM rt)
        )
        SELECT id, tenant_id, app_id, ${next.expiresAt}::bigint AS expires_at, ended_at, parent_tenant_id FROM rt`;
      if (rotated) {
        const { parentTenantId, ...session } = rotated;
        return { kind: "rotated" as const, session, parentTenantId };
      }
      return sql.begin(async (tx) => {
        // Row locks: concurrent refreshes of one token take turns, and each sees the
        // rotation (and the session's end) the one before it committed.
        const [row] = await tx<(SessionState & { parentTenantId: string | null; rotatedAt: number | null; successorHash: string | null; successorSealed: string | null })[]>`
          SELECT s.id, s.tenant_id, s.app_id, s.expires_at, s.ended_at, t.parent_tenant_id, r.rotated_at, r.successor_hash, r.successor_sealed
          FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN tenants t ON t.id = s.tenant_id WHERE r.token_hash = ${oldHash} FOR NO KEY UPDATE OF r, s`;
        if (!row || row.appId !== next.appId) return { kind: "unknown" as const };
        const { parentTenantId, rotatedAt, successorHash, successorSealed, ...session } = row;
        if (session.endedAt !== null) return { kind: "ended" as const, session };
        if (session.expiresAt <= next.now) return { kind: "expired" as const, session };
        if (rotatedAt !== null) {
          // A concurrent refresh (another tab) moments later gets the successor already issued,
          // never a sibling: one chain per session. Later, or once the successor moved on, it is reuse.
          const [successor] = successorHash === null ? [] : await tx<{ rotatedAt: number | null }[]>`SELECT rotated_at FROM refresh_tokens WHERE token_hash = ${successorHash}`;
          const fresh = next.now - rotatedAt <= next.graceMs && successor !== undefined && successor.rotatedAt === null;
          if (fresh) return { kind: "repeat" as const, session, parentTenantId, successorHash: successorHash!, sealedSuccessor: successorSealed };
          await tx`UPDATE sessions SET ended_at = ${next.now}, end_reason = 'refresh_reuse' WHERE id = ${session.id} AND ended_at IS NULL`;
          return { kind: "reused" as const, session };
        }
        await tx`UPDATE refresh_tokens SET rotated_at = ${next.now}, successor_hash = ${next.hash} WHERE token_hash = ${oldHash} AND rotated_at IS NULL`;
        await tx`INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (${next.hash}, ${session.id}, ${next.now})`;
        await tx`UPDATE sessions SET expires_at = ${next.expiresAt} WHERE id = ${session.id}`;
        return { kind: "rotated" as const, session: { ...session, expiresAt: next.expiresAt }, parentTenantId };
      });
    },
    async end(sessionId, at, reason) {
      return (await sql`UPDATE sessions SET ended_at = ${at}, end_reason = ${reason} WHERE id = ${sessionId} AND ended_at IS NULL`).count > 0;
    },
    async endAllForTenant(tenantId, at, reason) {
      return (await sql`UPDATE sessions SET ended_at = ${at}, end_reason = ${reason} WHERE tenant_id = ${tenantId} AND ended_at IS NULL`).count;
    },
    async beginTenantDeletion(appId, tenantId, now) {
      await sql.begin(async (tx) => {
        await tx`UPDATE tenants SET deleting_at = COALESCE(deleting_at, ${now}) WHERE app_id = ${appId} AND id = ${tenantId}`;
        await tx`UPDATE sessions SET ended_at = ${now}, end_reason = 'account_deleting' WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND ended_at IS NULL`;
      });
    },
    async cancelTenantDeletion(appId, tenantId) {
      await sql.begin(async (tx) => {
        await tx`UPDATE tenants SET deleting_at = NULL WHERE app_id = ${appId} AND id = ${tenantId}`;
        await tx`UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND end_reason = 'account_deleting'`;
      });
    },
    async purge(before) {
      return (await sql`DELETE FROM sessions WHERE expires_at < ${before} OR ended_at < ${before}`).count;
    },
  };
}
