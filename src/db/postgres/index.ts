import type { PgSql } from "./connection.ts";
import type { Repositories } from "../repositories.ts";
import { readSettings } from "../../apps/settings.ts";
import { createPgMetaRepo, createPgStatsRepo } from "./meta.ts";
import { createPgAppsRepo } from "./apps.ts";
import { createPgDevelopersRepo } from "./developers.ts";
import { createPgTenantsRepo } from "./tenants.ts";
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
import { createPgClusterRepo } from "./cluster.ts";

/** The PostgreSQL engine behind the same interfaces as SQLite. */
export function createPgRepositories(sql: PgSql): Repositories {
  return {
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
    records: createPgRecordsRepo(sql),
    admin: createPgAdminRepo(sql),
    cluster: createPgClusterRepo(sql),
  };
}
