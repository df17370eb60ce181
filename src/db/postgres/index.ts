import type { PgSql } from "./connection.ts";
import type { Repositories } from "../repositories.ts";
import type { SessionState, TenantRow } from "../types.ts";
import { readSettings } from "../../apps/settings.ts";
import { createPgMetaRepo, createPgStatsRepo } from "./meta.ts";
import { createPgAppsRepo } from "./apps.ts";
import { createPgDevelopersRepo } from "./developers.ts";
import { createPgTenantsRepo, tenantById } from "./tenants.ts";
import { createPgSessionsRepo } from "./sessions.ts";
import { createPgOAuthRepo } from "./oauth.ts";
import { createPgEmailTokensRepo } from "./email-tokens.ts";
import { createPgOutboxRepo } from "./outbox.ts";
import { createPgWebhooksRepo } from "./webhooks.ts";
import { createPgFilesRepo } from "./files.ts";
import { createPgBillingRepo } from "./billing.ts";
import { createPgInvitesRepo } from "./invites.ts";
import { createPgFamilyRepo } from "./family.ts";
import { createPgRecordsRepo } from "./records.ts";
import { createPgAdminRepo } from "./admin.ts";
import { createPgMfaRepo } from "./mfa.ts";
import { createPgClusterRepo } from "./cluster.ts";
import { createPgAuditRepo, createPgCronRepo } from "./audit.ts";
import type { PgChanges } from "./changes.ts";
import { createPgRowCache } from "./row-cache.ts";
import { announcing, EVERYTHING } from "./local-changes.ts";
import { createPgSigningKeysRepo } from "./signing-keys.ts";
import { createPgSignInRepo } from "./sign-in.ts";
import { createPgOrgsRepo } from "./orgs.ts";
import { createPgOrgBillingRepo } from "./org-billing.ts";
import { createPgRealtimeRepo } from "./realtime.ts";

/** Sessions and tenants kept in memory per node while the change feed is live (as on SQLite). */
export const PG_CACHE_SIZE = 50_000;

/**
 * The PostgreSQL engine behind the same interfaces as SQLite. With `changes` (a node's
 * listening connection, changes.ts), session states, tenants and entitlements are answered
 * from memory between announced changes; without it, every call reads the database.
 */
export function createPgRepositories(sql: PgSql, changes?: PgChanges): Repositories {
  const repos = {
    meta: createPgMetaRepo(sql),
    apps: createPgAppsRepo(sql, readSettings),
    developers: createPgDevelopersRepo(sql),
    tenants: createPgTenantsRepo(sql),
    sessions: createPgSessionsRepo(sql),
    stats: createPgStatsRepo(sql),
    oauth: createPgOAuthRepo(sql),
    emailTokens: createPgEmailTokensRepo(sql),
    outbox: createPgOutboxRepo(sql),
    webhooks: createPgWebhooksRepo(sql),
    files: createPgFilesRepo(sql),
    billing: createPgBillingRepo(sql),
    invites: createPgInvitesRepo(sql),
    family: createPgFamilyRepo(sql),
    records: createPgRecordsRepo(sql, changes),
    admin: createPgAdminRepo(sql),
    mfa: createPgMfaRepo(sql),
    audit: createPgAuditRepo(sql),
    cron: createPgCronRepo(sql),
    cluster: createPgClusterRepo(sql),
    signingKeys: createPgSigningKeysRepo(sql),
    signIn: createPgSignInRepo(sql),
    orgs: createPgOrgsRepo(sql),
    orgBilling: createPgOrgBillingRepo(sql),
    realtime: createPgRealtimeRepo(sql),
  } satisfies Repositories;
  return changes ? withChangeFeed(sql, repos, changes) : repos;
}

function withChangeFeed(sql: PgSql, repos: Repositories, changes: PgChanges): Repositories {
  const sessions = createPgRowCache<SessionState>(changes, "s:", async (id) => repos.sessions.state(id, 0), PG_CACHE_SIZE);
  // Keyed by id alone: the app is checked on the row.
  const tenants = createPgRowCache<TenantRow>(changes, "t:", (id) => tenantById(sql, id), PG_CACHE_SIZE);
  let billingVersion = 0;
  changes.on((p) => {
    if (p === "b" || p === "*" || p.startsWith("t:")) billingVersion++;
  });

  const session = (id: string) => [`s:${id}`];
  const tenant = (id: string) => [`t:${id}`];
  const billing = () => ["b"];
  return {
    ...repos,
    sessions: announcing(
      {
        ...repos.sessions,
        // A session's expiry only moves later (a refresh), which is not announced: a kept
        // state that looks expired is read again before anyone is refused.
        state: (id: string, now?: number) => sessions.get(id, (s) => s.expiresAt > (now ?? Date.now())),
      },
      changes,
      {
        rotate: (_args, r) => (r && typeof r === "object" && "session" in r ? session((r as { session: SessionState }).session.id) : ["s:*"]),
        end: ([id]) => session(id as string),
        endAllForTenant: () => ["s:*"],
        beginTenantDeletion: ([, tenantId]) => ["s:*", ...tenant(tenantId as string)],
        cancelTenantDeletion: ([, tenantId]) => ["s:*", ...tenant(tenantId as string)],
      },
    ),
    tenants: announcing(
      {
        ...repos.tenants,
        findById: (appId: string, id: string) => {
          const keep = (row: TenantRow | undefined) => (row && row.appId === appId ? row : undefined);
          const r = tenants.get(id);
          return r instanceof Promise ? r.then(keep) : keep(r);
        },
      },
      changes,
      {
        markVerified: ([id]) => tenant(id as string),
        setPasswordHash: ([id]) => tenant(id as string),
        setLocale: ([id]) => tenant(id as string),
        remove: EVERYTHING,
      },
    ),
    // Proving an address drops unverified provider links and ends their sessions.
    emailTokens: announcing(repos.emailTokens, changes, { verifyEmail: () => ["t:*", "s:*"], resetPassword: () => ["t:*", "s:*"] }),
    oauth: announcing(repos.oauth, changes, { linkExisting: EVERYTHING }),
    family: announcing(repos.family, changes, { join: EVERYTHING, leave: EVERYTHING, removeMember: EVERYTHING }),
    billing: announcing(
      { ...repos.billing, entitlementsVersion: () => (changes.live ? billingVersion : undefined) },
      changes,
      {
        insertPlan: billing,
        updatePlan: billing,
        upsertProviderSubscription: billing,
        upsertGrant: billing,
        removeSource: billing,
        setDevCancelAtPeriodEnd: billing,
        consumeDevSession: billing,
      },
    ),
    apps: announcing(repos.apps, changes, { remove: EVERYTHING }),
    // A password change ends the tenant's other sessions.
    mfa: announcing(repos.mfa, changes, { changePassword: ([, tenantId]) => ["s:*", ...tenant(tenantId as string)] }),
    signIn: announcing(repos.signIn, changes, {
      proveInbox: ([, tenantId]) => ["s:*", ...tenant(tenantId as string)],
      upgradeAnonymous: ([, tenantId]) => tenant(tenantId as string),
    }),
  };
}
