import type { Core } from "../core.ts";

const DAY = 24 * 3600 * 1000;
/** For apps deleted since: their trail is kept as long as the default. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

/** Drops each app's entries older than its `audit.retentionDays` (maintenance.ts runs it hourly). */
export async function pruneAudit(core: Core): Promise<number> {
  const now = core.clock();
  let dropped = 0;
  for (const appId of await core.db.audit.apps()) {
    const app = await core.db.apps.findById(appId);
    const days = app?.settings.audit.retentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
    dropped += await core.db.audit.prune(appId, now - days * DAY);
  }
  if (dropped > 0) core.log.info("pruned old audit entries", { count: dropped });
  return dropped;
}
