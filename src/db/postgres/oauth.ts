import type { PgSql, PgTx } from "./connection.ts";
import type { OAuthRepository } from "../repositories.ts";
import type { OAuthLink, OAuthStateRow, LinkedAccount, TenantRow } from "../types.ts";
import { stepCall } from "./steps.ts";
import { TENANT_COLUMNS } from "./tenants.ts";

/** States are kept this long after they expire, so a late replay is still told apart from a forged state (as on SQLite). */
const STATE_RETENTION_MS = 60 * 60 * 1000;

export async function link(tx: PgTx | PgSql, l: OAuthLink, tenantId: string): Promise<void> {
  await tx`INSERT INTO oauth_accounts (app_id, provider, provider_account_id, tenant_id, email, email_verified, linked_at, last_login_at)
    VALUES (${l.appId}, ${l.provider}, ${l.providerAccountId}, ${tenantId}, ${l.email}, ${l.emailVerified}, ${l.at}, ${l.at})`;
}

/**
 * Once someone proves they own the tenant's address (verify-email, password reset, a
 * provider-verified claim), every provider link made without a verified email is removed
 * and, when one was, every session ends (as on SQLite). Runs in the caller's transaction.
 */
export async function dropUnverifiedLinks(tx: PgTx, appId: string, tenantId: string, now: number): Promise<number> {
  const removed = (await tx`DELETE FROM oauth_accounts WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND email_verified = false`).count;
  if (removed > 0) await tx`UPDATE sessions SET ended_at = ${now}, end_reason = 'unverified_link_removed' WHERE app_id = ${appId} AND tenant_id = ${tenantId} AND ended_at IS NULL`;
  return removed;
}

export function createPgOAuthRepo(sql: PgSql): OAuthRepository {
  return {
    async createState(s) {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM oauth_states WHERE expires_at < ${s.createdAt - STATE_RETENTION_MS}`;
        await tx`INSERT INTO oauth_states (state_hash, app_id, provider, redirect_url, invite_token, code_verifier, browser_hash, created_at, expires_at)
          VALUES (${s.stateHash}, ${s.appId}, ${s.provider}, ${s.redirectUrl}, ${s.inviteToken}, ${s.codeVerifier}, ${s.browserHash}, ${s.createdAt}, ${s.expiresAt})`;
      });
    },
    async consumeState(stateHash, browserMatches, now) {
      return sql.begin(async (tx) => {
        const [state] = await tx<OAuthStateRow[]>`SELECT * FROM oauth_states WHERE state_hash = ${stateHash} FOR UPDATE`;
        if (!state) return { kind: "unknown" as const };
        if (!browserMatches(state.browserHash)) return { kind: "mismatch" as const, state };
        if (state.usedAt !== null) return { kind: "used" as const, state };
        await tx`UPDATE oauth_states SET used_at = ${now} WHERE state_hash = ${stateHash} AND used_at IS NULL`;
        return { kind: state.expiresAt <= now ? ("expired" as const) : ("ok" as const), state };
      });
    },
    async findTenant(appId, provider, providerAccountId) {
      const [r] = await sql<TenantRow[]>`SELECT ${sql.unsafe(TENANT_COLUMNS.replace(/(\w+)/g, "t.$1"))} FROM oauth_accounts a JOIN tenants t ON t.id = a.tenant_id AND t.app_id = a.app_id
        WHERE a.app_id = ${appId} AND a.provider = ${provider} AND a.provider_account_id = ${providerAccountId}`;
      return r;
    },
    async touch(l) {
      // email_verified keeps what the provider said when the link was made: that is what the link was trusted on.
      await sql`UPDATE oauth_accounts SET email = ${l.email}, last_login_at = ${l.at}
        WHERE app_id = ${l.appId} AND provider = ${l.provider} AND provider_account_id = ${l.providerAccountId}`;
    },
    async linkExisting(l, tenantId) {
      await sql.begin(async (tx) => {
        await dropUnverifiedLinks(tx, l.appId, tenantId, l.at);
        await link(tx, l, tenantId);
        // The provider proved the email; whoever set a password on the still-unverified account did not.
        const claimed = await tx`UPDATE tenants SET email_verified_at = ${l.at}, password_hash = NULL
          WHERE app_id = ${l.appId} AND id = ${tenantId} AND email_verified_at IS NULL`;
        if (claimed.count > 0) await tx`UPDATE sessions SET ended_at = ${l.at}, end_reason = 'oauth_claim' WHERE tenant_id = ${tenantId} AND ended_at IS NULL`;
      });
    },
    linkStep(l) {
      return (tenantId) => stepCall("oauth.link", undefined, (tx) => link(tx, l, tenantId));
    },
    async listForTenant(appId, tenantId) {
      return [
        ...(await sql<LinkedAccount[]>`SELECT provider, email, linked_at FROM oauth_accounts WHERE app_id = ${appId} AND tenant_id = ${tenantId} ORDER BY linked_at, provider`),
      ];
    },
  };
}
