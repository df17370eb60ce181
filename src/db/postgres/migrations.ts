import type { PgSql } from "./connection.ts";
import { initialSchema } from "./schema.ts";
import { mfaSchema } from "./schema-8.ts";
import { securityDashboardDeliveriesSchema } from "./schema-2.ts";
import { sharedStateSchema } from "./schema-3.ts";
import { listOrderIndexesSchema } from "./schema-4.ts";
import { recordScopesSchema } from "./schema-5.ts";
import { knownDevicesSchema } from "./schema-6.ts";
import { recordScopeStripesSchema } from "./schema-7.ts";
import { signInSchema } from "./schema-9.ts";
import { auditCronSchema } from "./schema-10.ts";
import { idempotencySchema } from "./schema-11.ts";
import { signInBlocksSchema } from "./schema-12.ts";
import { realtimeSchema } from "./schema-13.ts";
import { orgsSchema } from "./schema-14.ts";
import { recordBytesSchema } from "./schema-15.ts";
import { exportLinksOperatorsSchema } from "./schema-16.ts";
import { orgBillingSchema } from "./schema-18.ts";
import { orgRecordsSchema } from "./schema-17.ts";

export interface PgMigration {
  version: number;
  name: string;
  sql: string;
}

/**
 * PostgreSQL's own versioned migrations (its versions are not SQLite's). A released
 * migration is never edited: add a new one.
 */
export const PG_MIGRATIONS: PgMigration[] = [
  { version: 1, name: "initial", sql: initialSchema },
  { version: 2, name: "security-dashboard-delivery-bodies", sql: securityDashboardDeliveriesSchema },
  { version: 3, name: "shared-state", sql: sharedStateSchema },
  { version: 4, name: "list-order-indexes", sql: listOrderIndexesSchema },
  { version: 5, name: "record-scopes-and-changes", sql: recordScopesSchema },
  { version: 6, name: "login-devices", sql: knownDevicesSchema },
  { version: 7, name: "record-scope-stripes", sql: recordScopeStripesSchema },
  { version: 8, name: "mfa-passkeys", sql: mfaSchema },
  { version: 9, name: "sign-in", sql: signInSchema },
  { version: 10, name: "audit-and-cron", sql: auditCronSchema },
  { version: 11, name: "idempotency-keys", sql: idempotencySchema },
  { version: 12, name: "tenant-sign-in-blocks", sql: signInBlocksSchema },
  { version: 13, name: "realtime", sql: realtimeSchema },
  { version: 14, name: "organizations", sql: orgsSchema },
  { version: 15, name: "record-bytes", sql: recordBytesSchema },
  { version: 16, name: "export-links-and-backup-operators", sql: exportLinksOperatorsSchema },
  { version: 17, name: "org-records", sql: orgRecordsSchema },
  { version: 18, name: "org-billing", sql: orgBillingSchema },
];

/** Fixed key of the advisory lock that serializes migrations across nodes ("tenantd" in ASCII). */
export const MIGRATION_LOCK = 0x74656e616e7464n;

/**
 * Applies the pending migrations in one transaction that first takes a transaction-scoped
 * advisory lock: of several nodes starting at once, one migrates and the others wait, then
 * find nothing left to do. DDL is transactional in PostgreSQL, so a failed migration leaves
 * the schema as it was.
 */
export async function migrate(sql: PgSql, migrations: PgMigration[] = PG_MIGRATIONS): Promise<number[]> {
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${String(MIGRATION_LOCK)}::bigint)`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`;
    const applied = new Set((await tx<{ version: number }[]>`SELECT version FROM schema_migrations`).map((r) => r.version));
    const latestKnown = Math.max(0, ...migrations.map((m) => m.version));
    const newest = Math.max(0, ...applied);
    if (newest > latestKnown) {
      throw new Error(`tenantd: the PostgreSQL database is at schema version ${newest}, newer than this tenantd knows (${latestKnown}). Upgrade tenantd.`);
    }
    const ran: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(m.version)) continue;
      await tx.unsafe(m.sql);
      await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${m.version}, ${m.name}, ${Date.now()})`;
      ran.push(m.version);
    }
    return ran;
  });
}
