import { fail } from "../errors.ts";

/** Uploads one tenant may have in flight at once. */
export const UPLOADS_PER_TENANT = 8;
/** Uploads one client address may have in flight at once, whichever tenants it signs in as. */
export const UPLOADS_PER_IP = 16;

/**
 * Counts uploads in flight per tenant and per client address. Over either limit the upload
 * is refused at once (429) instead of queued: there is no server-wide slot a slow sender
 * could hold, and one tenant or address cannot take every connection.
 */
export function createUploadSlots() {
  const inFlight = new Map<string, number>();
  const take = (key: string) => inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
  const give = (key: string) => {
    const n = (inFlight.get(key) ?? 1) - 1;
    if (n <= 0) inFlight.delete(key);
    else inFlight.set(key, n);
  };
  return async function withSlot<T>(tenantKey: string, ip: string, task: () => Promise<T>): Promise<T> {
    // Without a socket (app.fetch under a host that hides it) every request shares "unknown".
    const keys = ip === "unknown" ? [`t|${tenantKey}`] : [`t|${tenantKey}`, `ip|${ip}`];
    const limits = [UPLOADS_PER_TENANT, UPLOADS_PER_IP];
    if (keys.some((k, i) => (inFlight.get(k) ?? 0) >= limits[i]!)) {
      throw fail("rate_limited", `Too many uploads at once (at most ${UPLOADS_PER_TENANT} per account). Wait for one to finish.`, { "retry-after": "1" });
    }
    keys.forEach(take);
    try {
      return await task();
    } finally {
      keys.forEach(give);
    }
  };
}
