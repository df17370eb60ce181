import type { SqliteDb } from "./connection.ts";
import { createAppsRepo } from "./apps.ts";
import { createDevelopersRepo } from "./developers.ts";
import { createTenantsRepo } from "./tenants.ts";
import { createSessionsRepo } from "./sessions.ts";
import { createStatsRepo } from "./stats.ts";
import { createOAuthRepo } from "./oauth.ts";
import { createEmailTokensRepo } from "./email-tokens.ts";
import { createOutboxRepo } from "./outbox.ts";
import { createWebhooksRepo } from "./webhooks.ts";
import { createFilesRepo } from "./files.ts";
import { createBillingRepo } from "./billing.ts";
import { createRecordsRepo } from "./records.ts";
import { createInvitesRepo } from "./invites.ts";
import { createFamilyRepo } from "./family.ts";
import { createMetaRepo } from "./meta.ts";
import { createAdminRepo } from "./admin.ts";
import { createAuditRepo, createCronRepo } from "./audit.ts";
import { readSettings } from "../../apps/settings.ts";
import { createMfaRepo } from "./mfa.ts";
import { createSigningKeysRepo } from "./signing-keys.ts";
import { createSignInRepo } from "./sign-in.ts";
import { createOrgsRepo } from "./orgs.ts";
import { createOrgBillingRepo } from "./org-billing.ts";
import { createRealtimeRepo } from "./realtime.ts";

/**
 * The domain operations over SQLite, one repository per area. Every method is async and
 * atomic on its own, so another SQL engine can stand behind the same signatures.
 */
export function createRepositories(sqlite: SqliteDb) {
  return {
    meta: createMetaRepo(sqlite),
    apps: createAppsRepo(sqlite, readSettings),
    developers: createDevelopersRepo(sqlite),
    tenants: createTenantsRepo(sqlite),
    sessions: createSessionsRepo(sqlite),
    stats: createStatsRepo(sqlite),
    oauth: createOAuthRepo(sqlite),
    emailTokens: createEmailTokensRepo(sqlite),
    outbox: createOutboxRepo(sqlite),
    webhooks: createWebhooksRepo(sqlite),
    files: createFilesRepo(sqlite),
    billing: createBillingRepo(sqlite),
    records: createRecordsRepo(sqlite),
    invites: createInvitesRepo(sqlite),
    family: createFamilyRepo(sqlite),
    admin: createAdminRepo(sqlite),
    mfa: createMfaRepo(sqlite),
    signingKeys: createSigningKeysRepo(sqlite),
    signIn: createSignInRepo(sqlite),
    audit: createAuditRepo(sqlite),
    cron: createCronRepo(sqlite),
    orgs: createOrgsRepo(sqlite),
    orgBilling: createOrgBillingRepo(sqlite),
    realtime: createRealtimeRepo(sqlite),
  };
}

/** Areas see the engine-neutral interfaces (repositories.ts); sqlite-conformance.ts checks the SQLite side. */
export type { Repositories } from "../repositories.ts";
