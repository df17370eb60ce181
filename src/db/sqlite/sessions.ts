import type { SqliteDb } from "./connection.ts";
import type { NewSession, RefreshOutcome, RotateInput, SessionState } from "../types.ts";
import { sessionStates } from "./session-state-cache.ts";
import { writeBatch } from "./write-batch.ts";

interface RawSession {
  id: string;
  tenant_id: string;
  app_id: string;
  expires_at: number;
  ended_at: number | null;
}

const toSession = (r: RawSession): SessionState => ({
  id: r.id,
  tenantId: r.tenant_id,
  appId: r.app_id,
  expiresAt: r.expires_at,
  endedAt: r.ended_at,
});

/** Inserts a session and its first refresh token; run inside the caller's transaction. */
export function prepareSessionInsert(db: SqliteDb): (tenantId: string, appId: string, s: NewSession) => void {
  const session = db.prepare<[string, string, string, number, number, string | null]>(
    "INSERT INTO sessions (id, tenant_id, app_id, created_at, expires_at, auth_methods) VALUES (?, ?, ?, ?, ?, ?)",
  );
  const refresh = db.prepare<[string, string, number]>("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)");
  return (tenantId, appId, s) => {
    session.run(s.id, tenantId, appId, s.createdAt, s.expiresAt, s.authMethods ?? null);
    refresh.run(s.refreshHash, s.id, s.createdAt);
  };
}

export type SessionsRepo = ReturnType<typeof createSessionsRepo>;

export function createSessionsRepo(db: SqliteDb) {
  const insertSession = prepareSessionInsert(db);
  const states = sessionStates(db);
  const batch = writeBatch(db);
  const q = {
    insertRefresh: db.prepare<[string, string, number]>("INSERT INTO refresh_tokens (token_hash, session_id, created_at) VALUES (?, ?, ?)"),
    byRefresh: db.prepare<[string], RawSession & { parent_tenant_id: string | null; rotated_at: number | null; successor_hash: string | null; successor_sealed: string | null }>(
      `SELECT s.id, s.tenant_id, s.app_id, s.expires_at, s.ended_at, t.parent_tenant_id, r.rotated_at, r.successor_hash, r.successor_sealed
       FROM refresh_tokens r JOIN sessions s ON s.id = r.session_id JOIN tenants t ON t.id = s.tenant_id WHERE r.token_hash = ?`,
    ),
    successorRotated: db.prepare<[string], { rotated_at: number | null }>("SELECT rotated_at FROM refresh_tokens WHERE token_hash = ?"),
    markRotated: db.prepare<[number, string, string]>("UPDATE refresh_tokens SET rotated_at = ?, successor_hash = ? WHERE token_hash = ? AND rotated_at IS NULL"),
    extend: db.prepare<[number, string]>("UPDATE sessions SET expires_at = ? WHERE id = ?"),
    end: db.prepare<[number, string, string]>("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE id = ? AND ended_at IS NULL"),
    endAll: db.prepare<[number, string, string]>("UPDATE sessions SET ended_at = ?, end_reason = ? WHERE tenant_id = ? AND ended_at IS NULL"),
    markDeleting: db.prepare<[number, string, string]>("UPDATE tenants SET deleting_at = COALESCE(deleting_at, ?) WHERE app_id = ? AND id = ?"),
    unmarkDeleting: db.prepare<[string, string]>("UPDATE tenants SET deleting_at = NULL WHERE app_id = ? AND id = ?"),
    endAllInApp: db.prepare<[number, string, string]>("UPDATE sessions SET ended_at = ?, end_reason = 'account_deleting' WHERE app_id = ? AND tenant_id = ? AND ended_at IS NULL"),
    reopen: db.prepare<[string, string]>("UPDATE sessions SET ended_at = NULL, end_reason = NULL WHERE app_id = ? AND tenant_id = ? AND end_reason = 'account_deleting'"),
    purge: db.prepare<[{ before: number }]>("DELETE FROM sessions WHERE expires_at < @before OR ended_at < @before"),
  };

  const rotate = db.transaction(
    (oldHash: string, next: RotateInput): RefreshOutcome => {
      const row = q.byRefresh.get(oldHash);
      // Another app's token is unknown here, and is left untouched for its own app.
      if (!row || row.app_id !== next.appId) return { kind: "unknown" };
      const session = toSession(row);
      if (session.endedAt !== null) return { kind: "ended", session };
      if (session.expiresAt <= next.now) return { kind: "expired", session };
      if (row.rotated_at !== null) {
        // A concurrent refresh (another tab) moments later gets the successor already issued,
        // never a sibling: one chain per session. Later, or once the successor moved on, it is reuse.
        const successor = row.successor_hash === null ? undefined : q.successorRotated.get(row.successor_hash);
        const fresh = next.now - row.rotated_at <= next.graceMs && successor !== undefined && successor.rotated_at === null;
        if (fresh) return { kind: "repeat", session, parentTenantId: row.parent_tenant_id, successorHash: row.successor_hash!, sealedSuccessor: row.successor_sealed };
        q.end.run(next.now, "refresh_reuse", session.id);
        return { kind: "reused", session };
      }
      q.markRotated.run(next.now, next.hash, oldHash);
      q.insertRefresh.run(next.hash, session.id, next.now);
      q.extend.run(next.expiresAt, session.id);
      return { kind: "rotated", session: { ...session, expiresAt: next.expiresAt }, parentTenantId: row.parent_tenant_id };
    },
  );

  return {
    async create(tenantId: string, appId: string, s: NewSession): Promise<void> {
      db.transaction(() => insertSession(tenantId, appId, s)).immediate();
    },
    /**
     * The state an access token's session is checked against on every request, from memory:
     * every write to `sessions` on this connection drops its entry, another process's commit
     * is seen within SESSION_FRESHNESS_MS of `now` (at once without `now`). See session-state-cache.ts.
     */
    state(sessionId: string, now?: number): SessionState | undefined {
      return states.get(sessionId, now);
    },
    /**
     * Exchanges a refresh token for a new one. Within `graceMs` of a rotation, the same old
     * token gets the same successor again (idempotent); any other use of a rotated token is
     * reuse and the whole session ends.
     */
    rotate(oldHash: string, next: RotateInput): Promise<RefreshOutcome> {
      // In the turn's batch, as a savepoint of its transaction: a rotation that fails is undone alone.
      return batch.add(() => rotate(oldHash, next));
    },
    async end(sessionId: string, at: number, reason: string): Promise<boolean> {
      return q.end.run(at, reason, sessionId).changes > 0;
    },
    async endAllForTenant(tenantId: string, at: number, reason: string): Promise<number> {
      return q.endAll.run(at, reason, tenantId).changes;
    },
    /**
     * First step of an account deletion: the tenant is marked deleting (its new files are
     * refused) and every session ends, so no request of it starts while its data goes.
     */
    async beginTenantDeletion(appId: string, tenantId: string, now: number): Promise<void> {
      db.transaction(() => {
        q.markDeleting.run(now, appId, tenantId);
        q.endAllInApp.run(now, appId, tenantId);
      }).immediate();
    },
    /** A deletion refused before anything was removed (a hook failed): the tenant and its sessions are back. */
    async cancelTenantDeletion(appId: string, tenantId: string): Promise<void> {
      db.transaction(() => {
        q.unmarkDeleting.run(appId, tenantId);
        q.reopen.run(appId, tenantId);
      }).immediate();
    },
    /** Drops sessions that expired or ended before `before`. */
    async purge(before: number): Promise<number> {
      return q.purge.run({ before }).changes;
    },
  };
}
