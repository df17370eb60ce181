import type { Core } from "./core.ts";
import { pruneDeliveries } from "./webhooks/retention.ts";

const HOUR = 3600_000;
/** Ended or expired sessions are kept this long (refresh-reuse forensics), then dropped. */
const SESSION_RETENTION_MS = 30 * 24 * HOUR;

/** Hourly housekeeping of the running server: drops long-dead sessions and their refresh tokens, and old webhook deliveries. */
export function startMaintenance(core: Core): void {
  const run = async () => {
    try {
      const purged = await core.db.sessions.purge(core.clock() - SESSION_RETENTION_MS);
      if (purged > 0) core.log.info("purged old sessions", { count: purged });
      await pruneDeliveries(core);
    } catch (e) {
      core.log.error("maintenance failed", { error: e });
    }
  };
  const timer = setInterval(run, HOUR);
  timer.unref();
  core.onClose(() => clearInterval(timer));
}
