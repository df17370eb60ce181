import type { Core } from "./core.ts";
import { pruneDeliveries } from "./webhooks/retention.ts";
import { IDEMPOTENCY_WINDOW_MS } from "./data/idempotency.ts";
import { cleanUpAnonymous } from "./auth/anonymous.ts";
import { pruneAudit } from "./audit/retention.ts";
import { CRON_RETENTION_MS } from "./server-hooks/cron.ts";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
/** Ended or expired sessions are kept this long (refresh-reuse forensics), then dropped. */
const SESSION_RETENTION_MS = 30 * 24 * HOUR;
/** How often housekeeping runs: once per hour on the server, or across all nodes together. */
export const MAINTENANCE_EVERY_MS = HOUR;
/** On PostgreSQL each node asks this often whether the hour's run is still unclaimed. */
const CLAIM_CHECK_MS = 5 * MINUTE;

async function housekeeping(core: Core): Promise<void> {
  const purged = await core.db.sessions.purge(core.clock() - SESSION_RETENTION_MS);
  if (purged > 0) core.log.info("purged old sessions", { count: purged });
  await pruneDeliveries(core);
  const forgotten = await core.db.records.purgeKeptReplies(core.clock() - IDEMPOTENCY_WINDOW_MS);
  if (forgotten > 0) core.log.info("dropped expired idempotency keys", { count: forgotten });
  // MFA tickets and passkey challenges live minutes; an hour past expiry nothing reads them.
  await core.db.mfa.purgeChallenges(core.clock() - HOUR);
  const anonymous = await cleanUpAnonymous(core);
  if (anonymous > 0) core.log.info("deleted idle anonymous tenants", { count: anonymous });
  await pruneAudit(core);
  await core.db.cron.prune(core.clock() - CRON_RETENTION_MS);
}

/**
 * One round of housekeeping: drops long-dead sessions and their refresh tokens, old
 * webhook deliveries, expired MFA tickets and passkey challenges, and idempotency keys past their 24 hours. On PostgreSQL, of all the nodes on one database only the one that
 * claims the round runs it (cluster.runJob), once per MAINTENANCE_EVERY_MS; returns
 * whether this process ran it.
 */
export async function runMaintenance(core: Core): Promise<boolean> {
  const cluster = core.db.cluster;
  if (!cluster) {
    await housekeeping(core);
    return true;
  }
  const now = core.clock();
  return cluster.runJob("maintenance", now - MAINTENANCE_EVERY_MS, now, () => housekeeping(core));
}

/** Starts the running server's housekeeping timer. */
export function startMaintenance(core: Core): void {
  const run = async () => {
    try {
      await runMaintenance(core);
    } catch (e) {
      core.log.error("maintenance failed", { error: e });
    }
  };
  const timer = setInterval(run, core.db.cluster ? CLAIM_CHECK_MS : MAINTENANCE_EVERY_MS);
  timer.unref();
  core.onClose(() => clearInterval(timer));
}
