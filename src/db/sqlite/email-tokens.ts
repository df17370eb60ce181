import type { SqliteDb } from "./connection.ts";
import { prepareDropUnverifiedLinks } from "./oauth.ts";
import type { ConsumeOutcome, EmailTokenPurpose, NewEmailToken, NewExportLink } from "../types.ts";

interface RawToken {
  tenant_id: string;
  expires_at: number;
  used_at: number | null;
}

export type EmailTokensRepo = ReturnType<typeof createEmailTokensRepo>;

export function createEmailTokensRepo(db: SqliteDb) {
  const q = {
    dropOlder: db.prepare<[string, string, string]>("DELETE FROM email_tokens WHERE app_id = ? AND tenant_id = ? AND purpose = ?"),
    insert: db.prepare<[string, string, string, string, number, number]>(
      "INSERT INTO email_tokens (token_hash, app_id, tenant_id, purpose, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    find: db.prepare<[string, string, string], RawToken>(
      "SELECT tenant_id, expires_at, used_at FROM email_tokens WHERE token_hash = ? AND app_id = ? AND purpose = ?",
    ),
    markUsed: db.prepare<[number, string]>("UPDATE email_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL"),
    setVerified: db.prepare<[number, string, string]>(
      "UPDATE tenants SET email_verified_at = COALESCE(email_verified_at, ?) WHERE app_id = ? AND id = ?",
    ),
    setPassword: db.prepare<[string, string, string]>("UPDATE tenants SET password_hash = ? WHERE app_id = ? AND id = ?"),
    insertExport: db.prepare<[string, string, string, number, number]>("INSERT INTO export_links (token_hash, app_id, tenant_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)"),
    findExport: db.prepare<[string, string], RawToken>("SELECT tenant_id, expires_at, used_at FROM export_links WHERE token_hash = ? AND app_id = ?"),
    useExport: db.prepare<[number, string]>("UPDATE export_links SET used_at = ? WHERE token_hash = ? AND used_at IS NULL"),
    endSessions: db.prepare<[number, string, string]>(
      "UPDATE sessions SET ended_at = ?, end_reason = 'password_reset' WHERE app_id = ? AND tenant_id = ? AND ended_at IS NULL",
    ),
  };

  const check = (hash: string, appId: string, purpose: EmailTokenPurpose, now: number): ConsumeOutcome => {
    return outcomeOf(q.find.get(hash, appId, purpose), now);
  };

  const outcomeOf = (row: RawToken | undefined, now: number): ConsumeOutcome => {
    if (!row) return { ok: false, reason: "unknown" };
    if (row.used_at !== null) return { ok: false, reason: "used" };
    if (row.expires_at <= now) return { ok: false, reason: "expired" };
    return { ok: true, tenantId: row.tenant_id };
  };
  const useExport = db.transaction((hash: string, appId: string, now: number): ConsumeOutcome => {
    const outcome = outcomeOf(q.findExport.get(hash, appId), now);
    if (outcome.ok) q.useExport.run(now, hash);
    return outcome;
  });

  const consume = (hash: string, appId: string, purpose: EmailTokenPurpose, now: number): ConsumeOutcome => {
    const outcome = check(hash, appId, purpose, now);
    if (outcome.ok) q.markUsed.run(now, hash);
    return outcome;
  };

  const issue = db.transaction((t: NewEmailToken) => {
    q.dropOlder.run(t.appId, t.tenantId, t.purpose);
    q.insert.run(t.hash, t.appId, t.tenantId, t.purpose, t.createdAt, t.expiresAt);
  });

  const dropUnverifiedLinks = prepareDropUnverifiedLinks(db);
  const verify = db.transaction((hash: string, appId: string, now: number): ConsumeOutcome => {
    const outcome = consume(hash, appId, "verify", now);
    if (outcome.ok) q.setVerified.run(now, appId, outcome.tenantId);
    if (outcome.ok) dropUnverifiedLinks(appId, outcome.tenantId, now);
    return outcome;
  });

  const reset = db.transaction((hash: string, appId: string, passwordHash: string, now: number): ConsumeOutcome => {
    const outcome = consume(hash, appId, "reset", now);
    if (!outcome.ok) return outcome;
    q.setPassword.run(passwordHash, appId, outcome.tenantId);
    q.endSessions.run(now, appId, outcome.tenantId);
    // The reset proved control of the inbox, and no other reset link may outlive it.
    q.setVerified.run(now, appId, outcome.tenantId);
    dropUnverifiedLinks(appId, outcome.tenantId, now);
    q.dropOlder.run(appId, outcome.tenantId, "reset");
    return outcome;
  });

  return {
    /** Stores a new token (hashed), replacing the tenant's older tokens of the same purpose. */
    async issue(token: NewEmailToken): Promise<void> {
      issue.immediate(token);
    },
    /** Checks a token without using it (before the slow password hash of a reset). */
    async check(hash: string, appId: string, purpose: EmailTokenPurpose, now: number): Promise<ConsumeOutcome> {
      return check(hash, appId, purpose, now);
    },
    /** Uses a verification token and marks the tenant's email verified, atomically. */
    async verifyEmail(hash: string, appId: string, now: number): Promise<ConsumeOutcome> {
      return verify.immediate(hash, appId, now);
    },
    /**
     * Uses a reset token: sets the new password hash, ends every session of the tenant,
     * marks the email verified and drops other reset tokens, atomically.
     */
    async resetPassword(hash: string, appId: string, passwordHash: string, now: number): Promise<ConsumeOutcome> {
      return reset.immediate(hash, appId, passwordHash, now);
    },
    async issueExportLink(l: NewExportLink): Promise<void> {
      q.insertExport.run(l.hash, l.appId, l.tenantId, l.createdAt, l.expiresAt);
    },
    async checkExportLink(hash: string, appId: string, now: number): Promise<ConsumeOutcome> {
      return outcomeOf(q.findExport.get(hash, appId), now);
    },
    async useExportLink(hash: string, appId: string, now: number): Promise<ConsumeOutcome> {
      return useExport.immediate(hash, appId, now);
    },
  };
}
