import type { PgSql } from "./connection.ts";
import type { SessionsRepository } from "../repositories.ts";
import type { SessionState } from "../sessions.ts";
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
      return sql.begin(async (tx) => {
        // Row locks: concurrent refreshes of one token take turns, and each sees the
        // rotation (and the session's end) the one before it committed.
        const [row] = await tx<(SessionState & { rotatedAt: number | null })[]>`
          SELECT s.id, s.tenant_id, s.app_id, s.expires_at, s.ended_at, r.rotated_at
          FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id WHERE r.token_hash = ${oldHash} FOR NO KEY UPDATE OF r, s`;
        if (!row || row.appId !== next.appId) return { kind: "unknown" as const };
        const { rotatedAt, ...session } = row;
        if (session.endedAt !== null) return { kind: "ended" as const, session };
        if (session.expiresAt <= next.now) return { kind: "expired" as const, session };
        if (rotatedAt !== null && next.now - rotatedAt > next.graceMs) {
          await tx`UPDATE sessions SET ended_at = ${next.now}, end_reason = 'refresh_reuse' WHERE id = ${session.id} AND ended_at IS NULL`;
          return { kind: "reused" as const, session };
        }
        await tx`UPDATE refresh_tokens SET rotated_at = ${next.now} WHERE token_hash = ${oldHash} AND rotated_at IS NULL`;
        await tx`INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (${next.hash}, ${session.id}, ${next.now})`;
        await tx`UPDATE sessions SET expires_at = ${next.expiresAt} WHERE id = ${session.id}`;
        return { kind: "rotated" as const, session: { ...session, expiresAt: next.expiresAt } };
      });
    },
    async end(sessionId, at, reason) {
      return (await sql`UPDATE sessions SET ended_at = ${at}, end_reason = ${reason} WHERE id = ${sessionId} AND ended_at IS NULL`).count > 0;
    },
    async endAllForTenant(tenantId, at, reason) {
      return (await sql`UPDATE sessions SET ended_at = ${at}, end_reason = ${reason} WHERE tenant_id = ${tenantId} AND ended_at IS NULL`).count;
    },
    async purge(before) {
      return (await sql`DELETE FROM sessions WHERE expires_at < ${before} OR ended_at < ${before}`).count;
    },
  };
}
