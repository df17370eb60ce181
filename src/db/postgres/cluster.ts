import type { PgSql } from "./connection.ts";
import type { ClusterRepository } from "../repositories.ts";

/**
 * The state every node on one database shares: rate-limit windows, sign-in failures,
 * named locks and maintenance runs (migration 3). Only transaction-scoped advisory locks,
 * so PgBouncer's transaction mode keeps working (scaling.md).
 */
export function createPgClusterRepo(sql: PgSql): ClusterRepository {
  // A lock key per name, in the database's own hash: every node derives the same one.
  const lockKey = (name: string) => sql`hashtextextended(${`tenantd:${name}`}, 0)`;

  return {
    async countRequests(keys, windowMs, now) {
      if (keys.length === 0) return [];
      // One statement for every key: a window still open counts on, an ended one restarts at 1.
      // The row lock the upsert takes makes concurrent counts on every node exact.
      const rows = await sql<{ key: string; count: number; resetAt: number }[]>`
        INSERT INTO rate_windows AS w (key, count, reset_at)
        SELECT k, 1, ${now + windowMs}::bigint FROM unnest(${keys}::text[]) AS k
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN w.reset_at <= ${now}::bigint THEN 1 ELSE w.count + 1 END,
          reset_at = CASE WHEN w.reset_at <= ${now}::bigint THEN excluded.reset_at ELSE w.reset_at END
        RETURNING key, count, reset_at`;
      return [...rows];
    },
    async sweepCounters(now, failuresBefore) {
      const windows = (await sql`DELETE FROM rate_windows WHERE reset_at <= ${now}`).count;
      const failures = (await sql`DELETE FROM login_failures WHERE last_at < ${failuresBefore}`).count;
      const devices = (await sql`DELETE FROM login_devices WHERE until_at <= ${now}`).count;
      return windows + failures + devices;
    },
    async loginFailures(key) {
      const [r] = await sql<{ count: number; last: number }[]>`SELECT count, last_at AS last FROM login_failures WHERE key = ${key}`;
      return r;
    },
    async recordLoginFailure(key, now, forgetBefore) {
      await sql`INSERT INTO login_failures AS f (key, count, last_at) VALUES (${key}, 1, ${now})
        ON CONFLICT (key) DO UPDATE SET
          count = CASE WHEN f.last_at < ${forgetBefore}::bigint THEN 1 ELSE f.count + 1 END,
          last_at = excluded.last_at`;
    },
    async clearLoginFailures(key) {
      await sql`DELETE FROM login_failures WHERE key = ${key}`;
    },
    async clearLoginFailuresFrom(prefix) {
      await sql`DELETE FROM login_failures WHERE starts_with(key, ${prefix})`;
    },
    async knownDevice(key, now) {
      return (await sql`SELECT 1 FROM login_devices WHERE key = ${key} AND until_at > ${now}`).length > 0;
    },
    async rememberDevice(key, until) {
      await sql`INSERT INTO login_devices (key, until_at) VALUES (${key}, ${until}) ON CONFLICT (key) DO UPDATE SET until_at = excluded.until_at`;
    },
    async exclusive(name, fn) {
      // The lock's transaction holds one connection while `fn` uses others: a pool of one
      // connection would wait on itself, so there the lock is left out.
      if (sql.options.max < 2) return fn();
      let result: Awaited<ReturnType<typeof fn>> | undefined;
      await sql.begin(async (tx) => {
        await tx`SELECT pg_advisory_xact_lock(${lockKey(name)})`;
        result = await fn();
      });
      return result as Awaited<ReturnType<typeof fn>>;
    },
    async runJob(name, ranBefore, now, fn) {
      // The claim is one short transaction under a try-lock: of nodes arriving together one
      // claims, the others skip at once instead of queueing; a claim stands for the whole
      // interval, so the job runs once per interval across all nodes. The run itself holds
      // no lock and no connection: the jobs are idempotent deletes, safe even if they overlap.
      const claimed = await sql.begin(async (tx) => {
        const [lock] = await tx<{ ok: boolean }[]>`SELECT pg_try_advisory_xact_lock(${lockKey(`job:${name}`)}) AS ok`;
        if (!lock!.ok) return false;
        const rows = await tx`INSERT INTO maintenance_runs AS m (name, ran_at) VALUES (${name}, ${now})
          ON CONFLICT (name) DO UPDATE SET ran_at = excluded.ran_at WHERE m.ran_at <= ${ranBefore}
          RETURNING name`;
        return rows.length > 0;
      });
      if (claimed) await fn();
      return claimed;
    },
  };
}
