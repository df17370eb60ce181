import type { Core } from "../core.ts";

export const DAY = 24 * 3600_000;
/**
 * A delivery's body (sealed, but still the tenant's email and maybe a token) is kept for a
 * month, long enough to debug a receiver; the outcome row for three months, past any
 * calendar month the usage page counts.
 */
export const BODY_RETENTION_DAYS = 30;
export const DELIVERY_RETENTION_DAYS = 90;

/** Drops old delivery bodies and rows; run by the server's hourly maintenance. */
export async function pruneDeliveries(core: Core): Promise<{ bodies: number; rows: number }> {
  const now = core.clock();
  const pruned = await core.db.webhooks.prune(now - BODY_RETENTION_DAYS * DAY, now - DELIVERY_RETENTION_DAYS * DAY);
  if (pruned.bodies + pruned.rows > 0) core.log.info("pruned old webhook deliveries", { bodiesRemoved: pruned.bodies, rowsRemoved: pruned.rows });
  return pruned;
}
