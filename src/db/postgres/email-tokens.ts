import type { PgSql, PgTx } from "./connection.ts";
import type { EmailTokensRepository } from "../repositories.ts";
import { dropUnverifiedLinks } from "./oauth.ts";
import type { ConsumeOutcome, EmailTokenPurpose } from "../types.ts";

export function createPgEmailTokensRepo(sql: PgSql): EmailTokensRepository {
  async function check(q: PgSql | PgTx, hash: string, appId: string, purpose: EmailTokenPurpose, now: number, lock: boolean): Promise<ConsumeOutcome> {
    const [row] = lock
      ? await q<{ tenantId: string; expiresAt: number; usedAt: number | null }[]>`SELECT tenant_id, expires_at, used_at FROM email_tokens
          WHERE token_hash = ${hash} AND app_id = ${appId} AND purpose = ${purpose} FOR UPDATE`
      : await q<{ tenantId: string; expiresAt: number; usedAt: number | null }[]>`SELECT tenant_id, expires_at, used_at FROM email_tokens
          WHERE token_hash = ${hash} AND app_id = ${appId} AND purpose = ${purpose}`;
    if (!row) return { ok: false, reason: "unknown" };
    if (row.usedAt !== null) return { ok: false, reason: "used" };
    if (row.expiresAt <= now) return { ok: false, reason: "expired" };
    return { ok: true, tenantId: row.tenantId };
  }

  /** Row lock first: of two concurrent uses of one token, the second sees it used. */
  async function consume(tx: PgTx, hash: string, appId: string, purpose: EmailTokenPurpose, now: number): Promise<ConsumeOutcome> {
    const outcome = await check(tx, hash, appId, purpose, now, true);
    if (outcome.ok) await tx`UPDATE email_tokens SET used_at = ${now} WHERE token_hash = ${hash} AND used_at IS NULL`;
    return outcome;
  }

  const setVerified = (tx: PgTx, appId: string, tenantId: string, now: number) =>
    tx`UPDATE tenants SET email_verified_at = COALESCE(email_verified_at, ${now}) WHERE app_id = ${appId} AND id = ${tenantId}`;

  async function exportLink(q: PgSql | PgTx, hash: string, appId: string, now: number, lock: boolean): Promise<ConsumeOutcome> {
    const [row] = lock
      ? await q<{ tenantId: string; expiresAt: number; usedAt: number | null }[]>`SELECT tenant_id, expires_at, used_at FROM export_links WHERE token_hash = ${hash} AND app_id = ${appId} FOR UPDATE`
      : await q<{ tenantId: string; expiresAt: number; usedAt: number | null }[]>`SELECT tenant_id, expires_at, used_at FROM export_links WHERE token_hash = ${hash} AND app_id = ${appId}`;
    if (!row) return { ok: false, reason: "unknown" };
    if (row.usedAt !== null) return { ok: false, reason: "used" };
    if (row.expiresAt <= now) return { ok: false, reason: "expired" };
    return { ok: true, tenantId: row.tenantId };
  }

  return {
    async issueExportLink(l) {
      await sql`INSERT INTO export_links (token_hash, app_id, tenant_id, created_at, expires_at) VALUES (${l.hash}, ${l.appId}, ${l.tenantId}, ${l.createdAt}, ${l.expiresAt})`;
    },
    async checkExportLink(hash, appId, now) {
      return exportLink(sql, hash, appId, now, false);
    },
    async useExportLink(hash, appId, now) {
      return sql.begin(async (tx) => {
        const outcome = await exportLink(tx, hash, appId, now, true);
        if (outcome.ok) await tx`UPDATE export_links SET used_at = ${now} WHERE token_hash = ${hash} AND used_at IS NULL`;
        return outcome;
      });
    },
    async issue(t) {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM email_tokens WHERE app_id = ${t.appId} AND tenant_id = ${t.tenantId} AND purpose = ${t.purpose}`;
        await tx`INSERT INTO email_tokens (token_hash, app_id, tenant_id, purpose, created_at, expires_at)
          VALUES (${t.hash}, ${t.appId}, ${t.tenantId}, ${t.purpose}, ${t.createdAt}, ${t.expiresAt})`;
      });
    },
    async check(hash, appId, purpose, now) {
      return check(sql, hash, appId, purpose, now, false);
    },
    async verifyEmail(hash, appId, now) {
      return sql.begin(async (tx) => {
        const outcome = await consume(tx, hash, appId, "verify", now);
        if (outcome.ok) await setVerified(tx, appId, outcome.tenantId, now);
        if (outcome.ok) await dropUnverifiedLinks(tx, appId, outcome.tenantId, now);
        return outcome;
      });
    },
    async resetPassword(hash, appId, passwordHash, now) {
      return sql.begin(async (tx) => {
        const outcome = await consume(tx, hash, appId, "reset", now);
        if (!outcome.ok) return outcome;
        await tx`UPDATE tenants SET password_hash = ${passwordHash} WHERE app_id = ${appId} AND id = ${outcome.tenantId}`;
        await tx`UPDATE sessions SET ended_at = ${now}, end_reason = 'password_reset' WHERE app_id = ${appId} AND tenant_id = ${outcome.tenantId} AND ended_at IS NULL`;
        // The reset proved control of the inbox, and no other reset link may outlive it.
        await setVerified(tx, appId, outcome.tenantId, now);
        await dropUnverifiedLinks(tx, appId, outcome.tenantId, now);
        await tx`DELETE FROM email_tokens WHERE app_id = ${appId} AND tenant_id = ${outcome.tenantId} AND purpose = 'reset'`;
        return outcome;
      });
    },
  };
}
