import type { SqliteDb } from "./connection.ts";
import type { PasskeyUse, SignInRepository } from "../repositories.ts";
import type { EmailSignInOutcome, EmailSignInRow, NewSession, OAuthLink, TenantRow } from "../types.ts";
import { prepareLink } from "./oauth.ts";
import { prepareSessionInsert } from "./sessions.ts";

interface RawRequest {
  id: string;
  email: string;
  code_hash: string;
  attempts: number;
  expires_at: number;
  used_at: number | null;
}

export function createSignInRepo(db: SqliteDb): SignInRepository {
  const q = {
    dropOlder: db.prepare<[string, string]>("DELETE FROM email_sign_ins WHERE app_id = ? AND email = ?"),
    dropExpired: db.prepare<[string, number]>("DELETE FROM email_sign_ins WHERE app_id = ? AND expires_at <= ?"),
    insert: db.prepare<[string, string, string, string, string, number, number]>(
      "INSERT INTO email_sign_ins (id, app_id, email, link_hash, code_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    byLink: db.prepare<[string, string], RawRequest>("SELECT id, email, code_hash, attempts, expires_at, used_at FROM email_sign_ins WHERE app_id = ? AND link_hash = ?"),
    byEmail: db.prepare<[string, string], RawRequest>(
      "SELECT id, email, code_hash, attempts, expires_at, used_at FROM email_sign_ins WHERE app_id = ? AND email = ? ORDER BY created_at DESC LIMIT 1",
    ),
    use: db.prepare<[number, string]>("UPDATE email_sign_ins SET used_at = ? WHERE id = ? AND used_at IS NULL"),
    attempt: db.prepare<[string]>("UPDATE email_sign_ins SET attempts = attempts + 1 WHERE id = ?"),
    claim: db.prepare<[number, string, string]>("UPDATE tenants SET email_verified_at = ?, password_hash = NULL WHERE app_id = ? AND id = ? AND email_verified_at IS NULL"),
    endSessions: db.prepare<[number, string]>("UPDATE sessions SET ended_at = ?, end_reason = 'email_sign_in_claim' WHERE tenant_id = ? AND ended_at IS NULL"),
    insertTenant: db.prepare<[string, string, string, string | null, number | null, string, string | null, number]>(
      "INSERT INTO tenants (id, app_id, email, password_hash, email_verified_at, locale, parent_tenant_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    markAnonymous: db.prepare<[string, string, number]>("INSERT INTO anonymous_tenants (tenant_id, app_id, created_at) VALUES (?, ?, ?)"),
    isAnonymous: db.prepare<[string, string], { n: number }>("SELECT 1 AS n FROM anonymous_tenants WHERE app_id = ? AND tenant_id = ?"),
    unmarkAnonymous: db.prepare<[string, string]>("DELETE FROM anonymous_tenants WHERE app_id = ? AND tenant_id = ?"),
    setIdentity: db.prepare<[string, string | null, number | null, string, string]>(
      "UPDATE tenants SET email = ?, password_hash = ?, email_verified_at = ? WHERE app_id = ? AND id = ?",
    ),
    idle: db.prepare<[{ app: string; before: number; limit: number }], string>(
      `SELECT a.tenant_id FROM anonymous_tenants a
       WHERE a.app_id = @app AND a.created_at < @before AND NOT EXISTS (
         SELECT 1 FROM sessions s LEFT JOIN refresh_tokens r ON r.session_id = s.id
         WHERE s.tenant_id = a.tenant_id AND (s.created_at >= @before OR r.created_at >= @before))
       ORDER BY a.created_at LIMIT @limit`,
    ).pluck(),
    usePasskey: db.prepare<[number, number, string, number]>("UPDATE passkeys SET counter = ?, last_used_at = ? WHERE id = ? AND counter = ?"),
    blocked: db.prepare<[string], number>("SELECT 1 FROM tenant_sign_in_blocks WHERE tenant_id = ?").pluck(),
  };

  const live = (row: RawRequest | undefined, now: number): EmailSignInOutcome | undefined => {
    if (!row) return { ok: false, reason: "unknown" };
    if (row.used_at !== null) return { ok: false, reason: "used" };
    if (row.expires_at <= now) return { ok: false, reason: "expired" };
    return undefined;
  };

  const issue = db.transaction((r: EmailSignInRow, now: number) => {
    q.dropOlder.run(r.appId, r.email);
    q.dropExpired.run(r.appId, now);
    q.insert.run(r.id, r.appId, r.email, r.linkHash, r.codeHash, r.createdAt, r.expiresAt);
  });
  const byLink = db.transaction((appId: string, linkHash: string, now: number): EmailSignInOutcome => {
    const row = q.byLink.get(appId, linkHash);
    const refused = live(row, now);
    if (refused) return refused;
    q.use.run(now, row!.id);
    return { ok: true, email: row!.email };
  });
  const byCode = db.transaction((appId: string, email: string, codeHash: string, now: number, maxAttempts: number): EmailSignInOutcome => {
    const row = q.byEmail.get(appId, email);
    const refused = live(row, now);
    if (refused) return refused;
    if (row!.attempts >= maxAttempts) return { ok: false, reason: "attempts" };
    if (row!.code_hash !== codeHash) {
      q.attempt.run(row!.id);
      return { ok: false, reason: row!.attempts + 1 >= maxAttempts ? "attempts" : "unknown" };
    }
    q.use.run(now, row!.id);
    return { ok: true, email: row!.email };
  });
  const prove = db.transaction((appId: string, tenantId: string, now: number) => {
    if (q.claim.run(now, appId, tenantId).changes > 0) q.endSessions.run(now, tenantId);
  });
  const create = db.transaction((t: TenantRow, anonymous: boolean) => {
    q.insertTenant.run(t.id, t.appId, t.email, t.passwordHash, t.emailVerifiedAt, t.locale, t.parentTenantId, t.createdAt);
    if (anonymous) q.markAnonymous.run(t.id, t.appId, t.createdAt);
  });
  const link = prepareLink(db);
  const upgrade = db.transaction((appId: string, tenantId: string, email: string, passwordHash: string | null, verifiedAt: number | null, l?: OAuthLink) => {
    if (q.unmarkAnonymous.run(appId, tenantId).changes === 0) return false;
    q.setIdentity.run(email, passwordHash, verifiedAt, appId, tenantId);
    if (l) link(l, tenantId);
    return true;
  });

  const insertSession = prepareSessionInsert(db);
  const passkeySession = db.transaction((use: PasskeyUse, tenantId: string, appId: string, session: NewSession) => {
    if (q.usePasskey.run(use.newCounter, use.at, use.passkeyId, use.oldCounter).changes === 0) return "counter" as const;
    if (q.blocked.get(tenantId) !== undefined) return "disabled" as const;
    insertSession(tenantId, appId, session);
    return "started" as const;
  });

  return {
    async issueEmailSignIn(row, now) {
      issue.immediate(row, now);
    },
    async consumeEmailLink(appId, linkHash, now) {
      return byLink.immediate(appId, linkHash, now);
    },
    async consumeEmailCode(appId, email, codeHash, now, maxAttempts) {
      return byCode.immediate(appId, email, codeHash, now, maxAttempts);
    },
    async proveInbox(appId, tenantId, now) {
      prove.immediate(appId, tenantId, now);
    },
    async createTenant(tenant, anonymous) {
      create.immediate(tenant, anonymous);
    },
    async isAnonymous(appId, tenantId) {
      return q.isAnonymous.get(appId, tenantId) !== undefined;
    },
    async upgradeAnonymous(appId, tenantId, email, passwordHash, verifiedAt, l) {
      return upgrade.immediate(appId, tenantId, email, passwordHash, verifiedAt, l);
    },
    async keepAnonymous(appId, tenantId) {
      return q.unmarkAnonymous.run(appId, tenantId).changes > 0;
    },
    async idleAnonymous(appId, idleBefore, limit) {
      return q.idle.all({ app: appId, before: idleBefore, limit });
    },
    async passkeySession(use, tenantId, appId, session) {
      return passkeySession.immediate(use, tenantId, appId, session);
    },
  };
}
