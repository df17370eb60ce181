import type { SqliteDb } from "./connection.ts";
import { tenantColumns, toTenant, type RawTenant } from "./tenants.ts";
import type { InTransactionStep, LinkedAccount, OAuthConsumeOutcome, OAuthLink, OAuthStateRow, TenantRow } from "../types.ts";

interface RawState {
  state_hash: string;
  app_id: string;
  provider: string;
  redirect_url: string;
  invite_token: string | null;
  code_verifier: string | null;
  browser_hash: string;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

const toState = (r: RawState): OAuthStateRow => ({
  stateHash: r.state_hash,
  appId: r.app_id,
  provider: r.provider,
  redirectUrl: r.redirect_url,
  inviteToken: r.invite_token,
  codeVerifier: r.code_verifier,
  browserHash: r.browser_hash,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
});

/** States are kept this long after they expire, so a late replay is still told apart from a forged state. */
const STATE_RETENTION_MS = 60 * 60 * 1000;

export type OAuthRepo = ReturnType<typeof createOAuthRepo>;

/**
 * Once someone proves they own the tenant's address (verify-email, password reset, a
 * provider-verified claim), every provider link made without a verified email is removed
 * and, when one was, every session ends: those links may belong to whoever typed the
 * address at a provider first. Runs inside the caller's transaction; returns the count.
 */
export function prepareDropUnverifiedLinks(db: SqliteDb): (appId: string, tenantId: string, now: number) => number {
  const drop = db.prepare<[string, string]>("DELETE FROM oauth_accounts WHERE app_id = ? AND tenant_id = ? AND email_verified = 0");
  const end = db.prepare<[number, string, string]>(
    "UPDATE sessions SET ended_at = ?, end_reason = 'unverified_link_removed' WHERE app_id = ? AND tenant_id = ? AND ended_at IS NULL",
  );
  return (appId, tenantId, now) => {
    const removed = drop.run(appId, tenantId).changes;
    if (removed > 0) end.run(now, appId, tenantId);
    return removed;
  };
}

/** Links a provider account to a tenant: a step inside the caller's transaction. */
export function prepareLink(db: SqliteDb): (l: OAuthLink, tenantId: string) => void {
  const insert = db.prepare<[string, string, string, string, string | null, number, number, number]>(
    "INSERT INTO oauth_accounts (app_id, provider, provider_account_id, tenant_id, email, email_verified, linked_at, last_login_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  return (l, tenantId) => void insert.run(l.appId, l.provider, l.providerAccountId, tenantId, l.email, l.emailVerified ? 1 : 0, l.at, l.at);
}

export function createOAuthRepo(db: SqliteDb) {
  const q = {
    insertState: db.prepare<[string, string, string, string, string | null, string | null, string, number, number]>(
      "INSERT INTO oauth_states (state_hash, app_id, provider, redirect_url, invite_token, code_verifier, browser_hash, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    ),
    purgeStates: db.prepare<[number]>("DELETE FROM oauth_states WHERE expires_at < ?"),
    stateByHash: db.prepare<[string], RawState>("SELECT * FROM oauth_states WHERE state_hash = ?"),
    markUsed: db.prepare<[number, string]>("UPDATE oauth_states SET used_at = ? WHERE state_hash = ? AND used_at IS NULL"),
    tenantByAccount: db
      .prepare<[string, string, string], RawTenant>(
        `SELECT ${tenantColumns("t.")} FROM oauth_accounts a JOIN tenants t ON t.id = a.tenant_id AND t.app_id = a.app_id
         WHERE a.app_id = ? AND a.provider = ? AND a.provider_account_id = ?`,
      )
      .raw(true),
    // email_verified keeps what the provider said when the link was made: that is what the link was trusted on.
    touch: db.prepare<[string | null, number, string, string, string]>(
      "UPDATE oauth_accounts SET email = ?, last_login_at = ? WHERE app_id = ? AND provider = ? AND provider_account_id = ?",
    ),
    claimTenant: db.prepare<[number, string, string]>(
      "UPDATE tenants SET email_verified_at = ?, password_hash = NULL WHERE app_id = ? AND id = ? AND email_verified_at IS NULL",
    ),
    endSessions: db.prepare<[number, string]>("UPDATE sessions SET ended_at = ?, end_reason = 'oauth_claim' WHERE tenant_id = ? AND ended_at IS NULL"),
    listByTenant: db.prepare<[string, string], { provider: string; email: string | null; linked_at: number }>(
      "SELECT provider, email, linked_at FROM oauth_accounts WHERE app_id = ? AND tenant_id = ? ORDER BY linked_at, provider",
    ),
  };

  const link = prepareLink(db);

  const createState = db.transaction((s: Omit<OAuthStateRow, "usedAt">) => {
    q.purgeStates.run(s.createdAt - STATE_RETENTION_MS);
    q.insertState.run(s.stateHash, s.appId, s.provider, s.redirectUrl, s.inviteToken, s.codeVerifier, s.browserHash, s.createdAt, s.expiresAt);
  });

  const consume = db.transaction((stateHash: string, browserMatches: (hash: string) => boolean, now: number): OAuthConsumeOutcome => {
    const raw = q.stateByHash.get(stateHash);
    if (!raw) return { kind: "unknown" };
    const state = toState(raw);
    // A foreign browser neither uses nor burns the state: the person who started it can still finish.
    if (!browserMatches(state.browserHash)) return { kind: "mismatch", state };
    if (state.usedAt !== null) return { kind: "used", state };
    q.markUsed.run(now, stateHash);
    return { kind: state.expiresAt <= now ? "expired" : "ok", state };
  });

  const dropUnverified = prepareDropUnverifiedLinks(db);
  const linkExisting = db.transaction((l: OAuthLink, tenantId: string) => {
    dropUnverified(l.appId, tenantId, l.at);
    link(l, tenantId);
    // The provider proved the email; whoever set a password on the still-unverified account did not.
    if (q.claimTenant.run(l.at, l.appId, tenantId).changes > 0) q.endSessions.run(l.at, tenantId);
  });

  return {
    async createState(state: Omit<OAuthStateRow, "usedAt">): Promise<void> {
      createState.immediate(state);
    },
    /** Marks the state used when the browser matches; tells why it cannot be used otherwise. */
    async consumeState(stateHash: string, browserMatches: (hash: string) => boolean, now: number): Promise<OAuthConsumeOutcome> {
      return consume.immediate(stateHash, browserMatches, now);
    },
    async findTenant(appId: string, provider: string, providerAccountId: string): Promise<TenantRow | undefined> {
      const r = q.tenantByAccount.get(appId, provider, providerAccountId);
      return r && toTenant(r);
    },
    /** Records what the provider said at this sign-in. */
    async touch(l: OAuthLink): Promise<void> {
      q.touch.run(l.email, l.at, l.appId, l.provider, l.providerAccountId);
    },
    /**
     * Links the account to an existing tenant with the same, provider-verified email. A tenant
     * whose email was not verified yet becomes verified, loses its password and its sessions;
     * links the tenant made without a verified email are removed.
     */
    async linkExisting(l: OAuthLink, tenantId: string): Promise<void> {
      linkExisting.immediate(l, tenantId);
    },
    /**
     * The link of a new tenant, as a step of the transaction that creates it
     * (`tenants.createWithSession`): a duplicate link then creates nothing.
     */
    linkStep(l: OAuthLink): InTransactionStep {
      return (tenantId) => link(l, tenantId);
    },
    async listForTenant(appId: string, tenantId: string): Promise<LinkedAccount[]> {
      return q.listByTenant.all(appId, tenantId).map((r) => ({ provider: r.provider, email: r.email, linkedAt: r.linked_at }));
    },
  };
}
