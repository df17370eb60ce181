import type Database from "better-sqlite3";
import { coreSchema } from "./schema/core.ts";
import { authSchema } from "./schema/auth.ts";
import { dataSchema } from "./schema/data.ts";
import { filesSchema } from "./schema/files.ts";
import { billingSchema } from "./schema/billing.ts";
import { webhooksSchema } from "./schema/webhooks.ts";
import { familySchema } from "./schema/family.ts";
import { oauthSchema } from "./schema/oauth.ts";
import { adminSchema } from "./schema/admin.ts";
import { securitySchema } from "./schema/security.ts";
import { deliveryBodiesSchema } from "./schema/delivery-bodies.ts";
import { recordAutoIndexesSchema } from "./schema/record-auto-indexes.ts";
import { idempotencySchema } from "./schema/idempotency.ts";
import { mfaSchema } from "./schema/mfa.ts";
import { signInSchema } from "./schema/sign-in.ts";
import { recordFieldIndexesSchema } from "./schema/record-field-indexes.ts";
import { auditCronSchema } from "./schema/audit-cron.ts";
import { signInBlocksSchema } from "./schema/sign-in-blocks.ts";
import { realtimeSchema } from "./schema/realtime.ts";
import { orgsSchema } from "./schema/orgs.ts";
import { orgRecordsSchema } from "./schema/org-records.ts";
import { recordBytesSchema } from "./schema/record-bytes.ts";
import { exportLinksOperatorsSchema } from "./schema/export-links-operators.ts";
import { orgBillingSchema } from "./schema/org-billing.ts";
import { recordFieldUpdateSchema } from "./schema/record-field-update.ts";

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/**
 * Versioned migrations, applied in order on startup, each in its own transaction.
 * A migration, once released, is never edited: add a new one.
 */
export const MIGRATIONS: Migration[] = [
  { version: 1, name: "core", sql: coreSchema },
  { version: 2, name: "auth", sql: authSchema },
  { version: 3, name: "data", sql: dataSchema },
  { version: 4, name: "files", sql: filesSchema },
  { version: 5, name: "billing", sql: billingSchema },
  { version: 6, name: "webhooks", sql: webhooksSchema },
  { version: 7, name: "family", sql: familySchema },
  { version: 8, name: "oauth", sql: oauthSchema },
  { version: 9, name: "admin-indexes", sql: adminSchema },
  { version: 10, name: "security", sql: securitySchema },
  { version: 11, name: "webhook-delivery-bodies", sql: deliveryBodiesSchema },
  { version: 12, name: "record-auto-indexes", sql: recordAutoIndexesSchema },
  { version: 13, name: "idempotency-keys", sql: idempotencySchema },
  { version: 14, name: "mfa-passkeys", sql: mfaSchema },
  { version: 15, name: "sign-in", sql: signInSchema },
  { version: 16, name: "audit-and-cron", sql: auditCronSchema },
  { version: 17, name: "record-field-indexes", sql: recordFieldIndexesSchema },
  { version: 18, name: "tenant-sign-in-blocks", sql: signInBlocksSchema },
  { version: 19, name: "realtime", sql: realtimeSchema },
  { version: 20, name: "organizations", sql: orgsSchema },
  { version: 21, name: "record-bytes", sql: recordBytesSchema },
  { version: 22, name: "export-links-and-backup-operators", sql: exportLinksOperatorsSchema },
  { version: 23, name: "org-records", sql: orgRecordsSchema },
  { version: 24, name: "org-billing", sql: orgBillingSchema },
  { version: 25, name: "record-field-update-trigger", sql: recordFieldUpdateSchema },
];

/**
 * Two processes may open a brand-new database at once (a server and a CLI): each migration
 * reads the applied versions inside its own write transaction, so the second process waits
 * for the first and then skips what it already did.
 */
export function migrate(db: Database.Database, migrations: Migration[] = MIGRATIONS): number[] {
  db.transaction(() => {
    db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)");
  }).immediate();
  const appliedNow = () => new Set(db.prepare("SELECT version FROM schema_migrations").pluck().all() as number[]);
  const latestKnown = Math.max(0, ...migrations.map((m) => m.version));
  const newest = Math.max(0, ...appliedNow());
  if (newest > latestKnown) {
    throw new Error(`tenantd: the database is at schema version ${newest}, newer than this tenantd knows (${latestKnown}). Upgrade tenantd.`);
  }
  const ran: number[] = [];
  const record = db.prepare("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    const applied = db.transaction(() => {
      if (appliedNow().has(m.version)) return false;
      db.exec(m.sql);
      record.run(m.version, m.name, Date.now());
      return true;
    }).immediate();
    if (applied) ran.push(m.version);
  }
  return ran;
}
