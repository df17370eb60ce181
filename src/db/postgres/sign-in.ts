import type { PgSql, PgTx } from "./connection.ts";
import type { PasskeyUse, SignInRepository } from "../repositories.ts";
import type { EmailSignInOutcome } from "../types.ts";
import { link } from "./oauth.ts";

interface RawRequest {
  id: string;
  email: string;
  codeHash: string;
  attempts: number;
  expiresAt: number;
  usedAt: number | null;
}

const live = (row: RawRequest | undefined, now: number): EmailSignInOutcome | undefined => {
  if (!row) return { ok: false, reason: "unknown" };
  if (row.usedAt !== null) return { ok: false, reason: "used" };
  if (row.expiresAt <= now) return { ok: false, reason: "expired" };
  return undefined;
};

const use = (tx: PgTx, id: string, now: number) => tx`UPDATE email_sign_ins SET used_at = ${now} WHERE id = ${id} AND used_at IS NULL`;

export function createPgSignInRepo(sql: PgSql): SignInRepository {
  return {
    async issueEmailSignIn(r, now) {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM email_sign_ins WHERE app_id = ${r.appId} AND (email = ${r.email} OR expires_at <= ${now})`;
        await tx`INSERT INTO email_sign_ins (id, app_id, email, link_hash, code_hash, created_at, expires_at)
          VALUES (${r.id}, ${r.appId}, ${r.email}, ${r.linkHash}, ${r.codeHash}, ${r.createdAt}, ${r.expiresAt})`;
      });
    },
    async consumeEmailLink(appId, linkHash, now) {
      return sql.begin(async (tx) => {
        // Row lock: of two uses of one link, the second sees it used.
        const [row] = await tx<RawRequest[]>`SELECT id, email, code_hash, attempts, expires_at, used_at FROM email_sign_ins
          WHERE app_id = ${appId} AND link_hash = ${linkHash} FOR UPDATE`;
        const refused = live(row, now);
        if (refused) return refused;
        await use(tx, row!.id, now);
        return { ok: true as const, email: row!.email };
      });
    },
    async consumeEmailCode(appId, email, codeHash, now, maxAttempts) {
      return sql.begin(async (tx): Promise<EmailSignInOutcome> => {
        const [row] = await tx<RawRequest[]>`SELECT id, email, code_hash, attempts, expires_at, used_at FROM email_sign_ins
          WHERE app_id = ${appId} AND email = ${email} ORDER BY created_at DESC LIMIT 1 FOR UPDATE`;
        const refused = live(row, now);
        if (refused) return refused;
        if (row!.attempts >= maxAttempts) return { ok: false, reason: "attempts" };
        if (row!.codeHash !== codeHash) {
          await tx`UPDATE email_sign_ins SET attempts = attempts + 1 WHERE id = ${row!.id}`;
          return { ok: false, reason: row!.attempts + 1 >= maxAttempts ? "attempts" : "unknown" };
        }
        await use(tx, row!.id, now);
        return { ok: true, email: row!.email };
      });
    },
    async proveInbox(appId, tenantId, now) {
      await sql.begin(async (tx) => {
        const claimed = await tx`UPDATE tenants SET email_verified_at = ${now}, password_hash = NULL
          WHERE app_id = ${appId} AND id = ${tenantId} AND email_verified_at IS NULL`;
        if (claimed.count > 0) await tx`UPDATE sessions SET ended_at = ${now}, end_reason = 'email_sign_in_claim' WHERE tenant_id = ${tenantId} AND ended_at IS NULL`;
      });
    },
    async createTenant(t, anonymous) {
      await sql.begin(async (tx) => {
        await tx`INSERT INTO tenants (id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at)
          VALUES (${t.id}, ${t.appId}, ${t.email}, ${t.passwordHash}, ${t.emailVerifiedAt}, ${t.locale}, ${t.parentTenantId}, ${t.createdAt})`;
        if (anonymous) await tx`INSERT INTO anonymous_tenants (tenant_id, app_id, created_at) VALUES (${t.id}, ${t.appId}, ${t.createdAt})`;
      });
    },
    async isAnonymous(appId, tenantId) {
      const rows = await sql`SELECT 1 FROM anonymous_tenants WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
      return rows.length > 0;
    },
    async upgradeAnonymous(appId, tenantId, email, passwordHash, verifiedAt, l) {
      return sql.begin(async (tx) => {
        const gone = await tx`DELETE FROM anonymous_tenants WHERE app_id = ${appId} AND tenant_id = ${tenantId}`;
        if (gone.count === 0) return false;
        await tx`UPDATE tenants SET email = ${email}, password_hash = ${passwordHash}, email_verified_at = ${verifiedAt} WHERE app_id = ${appId} AND id = ${tenantId}`;
        if (l) await link(tx, l, tenantId);
        return true;
      });
    },
    async keepAnonymous(appId, tenantId) {
      return (await sql`DELETE FROM anonymous_tenants WHERE app_id = ${appId} AND tenant_id = ${tenantId}`).count > 0;
    },
    async passkeySession(use: PasskeyUse, tenantId, appId, s) {
      // One autocommitted statement where it was three (counter, sign-in block, session):
      // a passkey sign-in's round trips are most of its cost here (bench/NOTES.md). The
      // counter's compare-and-set is what makes two uses of one assertion take turns.
      const [row] = await sql<{ used: boolean; disabledAt: number | null }[]>`
        WITH used AS (
          UPDATE passkeys SET counter = ${use.newCounter}, last_used_at = ${use.at} WHERE id = ${use.passkeyId} AND counter = ${use.oldCounter} RETURNING id
        ), block AS (
          SELECT disabled_at FROM tenant_sign_in_blocks WHERE tenant_id = ${tenantId}
        ), session AS (
          INSERT INTO sessions (id, tenant_id, app_id, created_at, expires_at, auth_methods)
          SELECT ${s.id}, ${tenantId}, ${appId}, ${s.createdAt}, ${s.expiresAt}, ${s.authMethods ?? null} FROM used WHERE NOT EXISTS (SELECT 1 FROM block)
          RETURNING id
        ), token AS (
          INSERT INTO refresh_tokens (token_hash, session_id, created_at) SELECT ${s.refreshHash}, id, ${s.createdAt} FROM session
        )
        SELECT EXISTS (SELECT 1 FROM used) AS used, (SELECT disabled_at FROM block) AS disabled_at`;
      if (!row!.used) return "counter";
      return row!.disabledAt === null ? "started" : "disabled";
    },
    async idleAnonymous(appId, idleBefore, limit) {
      const rows = await sql<{ tenantId: string }[]>`SELECT a.tenant_id FROM anonymous_tenants a
        WHERE a.app_id = ${appId} AND a.created_at < ${idleBefore} AND NOT EXISTS (
          SELECT 1 FROM sessions s LEFT JOIN refresh_tokens r ON r.session_id = s.id
          WHERE s.tenant_id = a.tenant_id AND (s.created_at >= ${idleBefore} OR r.created_at >= ${idleBefore}))
        ORDER BY a.created_at LIMIT ${limit}`;
      return rows.map((r) => r.tenantId);
    },
  };
}
