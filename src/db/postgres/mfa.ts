import type { PgSql } from "./connection.ts";
import type { MfaRepository } from "../repositories.ts";
import type { AuthChallengeKind, AuthChallengeRow, PasskeyRow, SessionAuth, TotpRow } from "../types.ts";
import { challengeOutcome } from "../shared.ts";

export function createPgMfaRepo(sql: PgSql): MfaRepository {
  /**
   * Uses a challenge in one autocommitted statement (a passkey sign-in's round trips,
   * bench/NOTES.md), reading the passkey of `credentialId` in the same one. The row lock makes
   * two concurrent uses take turns, and the second re-reads the row and finds it used. Only a
   * refusal reads again, to say why.
   */
  const consumeWith = async (hash: string, appId: string, kind: AuthChallengeKind, now: number, credentialId?: string) => {
    const passkey = credentialId === undefined ? sql`NULL::json` : sql`(SELECT json_build_object('id', p.id, 'appId', p.app_id, 'tenantId', p.tenant_id,
      'credentialId', p.credential_id, 'publicKey', p.public_key, 'counter', p.counter, 'transports', p.transports, 'name', p.name,
      'createdAt', p.created_at, 'lastUsedAt', p.last_used_at) FROM passkeys p WHERE p.app_id = ${appId} AND p.credential_id = ${credentialId})`;
    const [used] = await sql<(AuthChallengeRow & { passkey: PasskeyRow | null })[]>`WITH c AS (
        UPDATE auth_challenges SET used_at = ${now}
        WHERE hash = ${hash} AND app_id = ${appId} AND kind = ${kind} AND used_at IS NULL AND expires_at > ${now}
        RETURNING hash, app_id, tenant_id, kind, data, attempts, created_at, expires_at
      ) SELECT c.*, NULL::bigint AS used_at, ${passkey} AS passkey FROM c`;
    if (used) {
      const { passkey: row, ...challenge } = used;
      return { outcome: { ok: true as const, row: challenge }, passkey: row ?? undefined };
    }
    const [refused] = await sql<AuthChallengeRow[]>`SELECT * FROM auth_challenges WHERE hash = ${hash} AND app_id = ${appId} AND kind = ${kind}`;
    const outcome = challengeOutcome(refused, now);
    // The update refused it, so it is not usable whatever the second read says.
    return { outcome: outcome.ok ? ({ ok: false, reason: "unknown" } as const) : outcome };
  };
  const codesLeft = async (q: PgSql, tenantId: string) =>
    Number((await q<{ n: number }[]>`SELECT COUNT(*)::int AS n FROM recovery_codes WHERE tenant_id = ${tenantId} AND used_at IS NULL`)[0]!.n);
  return {
    async totp(appId, tenantId) {
      const [row] = await sql<TotpRow[]>`SELECT * FROM tenant_totp WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
      return row;
    },
    async startTotp(r) {
      const rows = await sql`INSERT INTO tenant_totp (tenant_id, app_id, secret_sealed, created_at) VALUES (${r.tenantId}, ${r.appId}, ${r.secretSealed}, ${r.createdAt})
        ON CONFLICT (tenant_id) DO UPDATE SET secret_sealed = excluded.secret_sealed, created_at = excluded.created_at, last_step = NULL
        WHERE tenant_totp.confirmed_at IS NULL`;
      return rows.count > 0;
    },
    async confirmTotp(appId, tenantId, step, hashes, now) {
      return sql.begin(async (tx) => {
        const done = await tx`UPDATE tenant_totp SET confirmed_at = ${now}, last_step = ${step} WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND confirmed_at IS NULL`;
        if (done.count === 0) return false;
        await tx`DELETE FROM recovery_codes WHERE tenant_id = ${tenantId}`;
        for (const h of hashes) await tx`INSERT INTO recovery_codes (tenant_id, code_hash, created_at) VALUES (${tenantId}, ${h}, ${now})`;
        return true;
      });
    },
    async useTotpStep(appId, tenantId, step) {
      const r = await sql`UPDATE tenant_totp SET last_step = ${step}
        WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND confirmed_at IS NOT NULL AND (last_step IS NULL OR last_step < ${step})`;
      return r.count > 0;
    },
    async disableTotp(appId, tenantId) {
      return sql.begin(async (tx) => {
        const r = await tx`DELETE FROM tenant_totp WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
        if (r.count > 0) await tx`DELETE FROM recovery_codes WHERE tenant_id = ${tenantId}`;
        return r.count > 0;
      });
    },
    async replaceRecoveryCodes(tenantId, hashes, now) {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM recovery_codes WHERE tenant_id = ${tenantId}`;
        for (const h of hashes) await tx`INSERT INTO recovery_codes (tenant_id, code_hash, created_at) VALUES (${tenantId}, ${h}, ${now})`;
      });
    },
    async useRecoveryCode(tenantId, hash, now) {
      const r = await sql`UPDATE recovery_codes SET used_at = ${now} WHERE tenant_id = ${tenantId} AND code_hash = ${hash} AND used_at IS NULL`;
      return r.count === 0 ? null : codesLeft(sql, tenantId);
    },
    recoveryCodesLeft: (tenantId) => codesLeft(sql, tenantId),

    async createChallenge(r) {
      await sql`INSERT INTO auth_challenges (hash, app_id, tenant_id, kind, data, created_at, expires_at)
        VALUES (${r.hash}, ${r.appId}, ${r.tenantId}, ${r.kind}, ${r.data}, ${r.createdAt}, ${r.expiresAt})`;
    },
    async peekChallenge(hash, appId, kind, now) {
      const [row] = await sql<AuthChallengeRow[]>`SELECT * FROM auth_challenges WHERE hash = ${hash} AND app_id = ${appId} AND kind = ${kind}`;
      return challengeOutcome(row, now);
    },
    async consumeChallenge(hash, appId, kind, now) {
      return (await consumeWith(hash, appId, kind, now)).outcome;
    },
    async consumePasskeyChallenge(hash, appId, kind, now, credentialId) {
      return consumeWith(hash, appId, kind, now, credentialId);
    },
    async failChallenge(hash) {
      const [row] = await sql<{ attempts: number }[]>`UPDATE auth_challenges SET attempts = attempts + 1 WHERE hash = ${hash} RETURNING attempts`;
      return row?.attempts ?? 0;
    },
    async purgeChallenges(before) {
      return (await sql`DELETE FROM auth_challenges WHERE expires_at < ${before}`).count;
    },

    async insertPasskey(p) {
      await sql`INSERT INTO passkeys (id, app_id, tenant_id, credential_id, public_key, counter, transports, name, created_at)
        VALUES (${p.id}, ${p.appId}, ${p.tenantId}, ${p.credentialId}, ${p.publicKey}, ${p.counter}, ${p.transports}, ${p.name}, ${p.createdAt})`;
    },
    passkeys: (appId, tenantId) => sql<PasskeyRow[]>`SELECT * FROM passkeys WHERE app_id = ${appId} AND tenant_id = ${tenantId} ORDER BY created_at, id`,
    async passkeyByCredential(appId, credentialId) {
      const [row] = await sql<PasskeyRow[]>`SELECT * FROM passkeys WHERE app_id = ${appId} AND credential_id = ${credentialId}`;
      return row;
    },
    async renamePasskey(appId, tenantId, id, name) {
      return (await sql`UPDATE passkeys SET name = ${name} WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND id = ${id}`).count > 0;
    },
    async removePasskey(appId, tenantId, id) {
      return (await sql`DELETE FROM passkeys WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND id = ${id}`).count > 0;
    },
    async usePasskey(id, oldCounter, newCounter, at) {
      return (await sql`UPDATE passkeys SET counter = ${newCounter}, last_used_at = ${at} WHERE id = ${id} AND counter = ${oldCounter}`).count > 0;
    },

    async changePassword(appId, tenantId, hash, keep, now) {
      await sql.begin(async (tx) => {
        await tx`UPDATE tenants SET password_hash = ${hash} WHERE app_id = ${appId} AND id = ${tenantId}`;
        await tx`UPDATE sessions SET ended_at = ${now}, end_reason = 'password_changed'
          WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND id <> ${keep} AND ended_at IS NULL`;
      });
    },
    async sessionAuth(sessionId) {
      const [row] = await sql<SessionAuth[]>`SELECT tenant_id, COALESCE(authenticated_at, created_at) AS authenticated_at, auth_methods AS methods FROM sessions WHERE id = ${sessionId}`;
      return row;
    },
    async markAuthenticated(sessionId, at, methods) {
      await sql`UPDATE sessions SET authenticated_at = ${at}, auth_methods = ${methods} WHERE id = ${sessionId}`;
    },
  };
}
