import type { PgSql } from "./connection.ts";
import type { AuditRepository, CronRepository } from "../repositories.ts";
import type { AuditEntryRow, AuditHead, CronRunRow, NewAuditEntry } from "../types.ts";
import { AUDIT_GENESIS } from "../shared.ts";

const COLUMNS = "app_id, seq, id, at, actor_type, actor_id, action, tenant_id, target, ip, client, request_id, details, prev_hash, hash";

/**
 * Pipelined statements of one connection, awaited together: every one has answered before
 * this returns or throws (the first failure), so none is still in flight on the connection.
 */
async function settled<T extends readonly unknown[]>(queries: readonly [...{ [K in keyof T]: PromiseLike<T[K]> }]): Promise<T> {
  const results = await Promise.allSettled(queries);
  const failed = results.find((r) => r.status === "rejected");
  if (failed) throw (failed as PromiseRejectedResult).reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

type Pending = { entry: NewAuditEntry; seal: Seal; resolve: (row: AuditEntryRow) => void; reject: (e: unknown) => void };
type Seal = Parameters<AuditRepository["append"]>[1];

export function createPgAuditRepo(sql: PgSql): AuditRepository {
  /**
   * One app's entries in one transaction: the head row's lock serializes appends to an app
   * across every node; other apps' go on. Two round trips on a connection of its own: BEGIN
   * goes out with the locking read, the entries and the new head (one statement) with
   * COMMIT, so the lock is held across one round trip. The app's first entry makes the head row first.
   */
  async function appendAll(appId: string, batch: Pending[]): Promise<AuditEntryRow[]> {
    const tx = await sql.reserve();
    try {
      const lockHead = () => tx<{ seq: number; hash: string }[]>`SELECT seq, hash FROM audit_heads WHERE app_id = ${appId} FOR UPDATE`;
      let [, [head]] = await settled([tx`BEGIN`, lockHead()]);
      if (!head) {
        await tx`INSERT INTO audit_heads (app_id, seq, hash, pruned_seq, pruned_hash) VALUES (${appId}, 0, ${AUDIT_GENESIS}, 0, ${AUDIT_GENESIS}) ON CONFLICT (app_id) DO NOTHING`;
        [head] = await lockHead();
      }
      let { seq, hash } = head!;
      const rows = batch.map(({ entry, seal }): AuditEntryRow => {
        const unsealed = { ...entry, seq: ++seq, prevHash: hash };
        hash = seal(unsealed);
        return { ...unsealed, hash };
      });
      const values = rows.map((r) => ({
        app_id: r.appId, seq: r.seq, id: r.id, at: r.at, actor_type: r.actorType, actor_id: r.actorId, action: r.action, tenant_id: r.tenantId,
        target: r.target, ip: r.ip, client: r.client, request_id: r.requestId, details: r.details, prev_hash: r.prevHash, hash: r.hash,
      }));
      await settled([
        tx`WITH added AS (INSERT INTO audit_log ${tx(values, ...(COLUMNS.split(", ") as (keyof (typeof values)[number])[]))})
          UPDATE audit_heads SET seq = ${seq}, hash = ${hash} WHERE app_id = ${appId}`,
        // After a failed statement PostgreSQL answers COMMIT by rolling back.
        tx`COMMIT`,
      ]);
      return rows;
    } catch (e) {
      // Nothing is left open on the connection when it goes back to the pool.
      await tx`ROLLBACK`.catch(() => {});
      throw e;
    } finally {
      tx.release();
    }
  }

  /**
   * Entries of an app that arrive while its last batch commits wait and go together in the
   * next one (a group commit): under concurrent sign-ins the head's lock and a commit are
   * paid once per batch, not once per entry. Each caller still returns only once its entry
   * is committed. A failed batch of several is tried again one entry at a time, so one bad
   * entry fails only its own caller.
   */
  const waiting = new Map<string, Pending[]>();
  async function drain(appId: string, queue: Pending[]): Promise<void> {
    while (queue.length > 0) {
      const batch = queue.splice(0);
      try {
        const rows = await appendAll(appId, batch);
        batch.forEach((p, i) => p.resolve(rows[i]!));
      } catch (e) {
        if (batch.length === 1) batch[0]!.reject(e);
        else for (const p of batch) await appendAll(appId, [p]).then(([row]) => p.resolve(row!), p.reject);
      }
    }
    waiting.delete(appId);
  }

  return {
    append: (entry, seal) =>
      new Promise<AuditEntryRow>((resolve, reject) => {
        const queue = waiting.get(entry.appId);
        if (queue) return void queue.push({ entry, seal, resolve, reject });
        const fresh = [{ entry, seal, resolve, reject }];
        waiting.set(entry.appId, fresh);
        void drain(entry.appId, fresh);
      }),
    async list(appId, f) {
      const on = (cond: boolean, fragment: () => ReturnType<PgSql>) => (cond ? fragment() : sql``);
      const rows = await sql<AuditEntryRow[]>`SELECT ${sql.unsafe(COLUMNS)} FROM audit_log WHERE app_id = ${appId}
        ${on(f.tenantId !== undefined, () => sql`AND tenant_id = ${f.tenantId!}`)}
        ${on(f.action !== undefined, () => sql`AND action = ${f.action!}`)}
        ${on(f.actionPrefix !== undefined, () => sql`AND starts_with(action, ${f.actionPrefix!})`)}
        ${on(f.actorType !== undefined, () => sql`AND actor_type = ${f.actorType!}`)}
        ${on(f.actorId !== undefined, () => sql`AND actor_id = ${f.actorId!}`)}
        ${on(f.from !== undefined, () => sql`AND at >= ${f.from!}`)}
        ${on(f.to !== undefined, () => sql`AND at < ${f.to!}`)}
        ${on(f.beforeSeq !== undefined, () => sql`AND seq < ${f.beforeSeq!}`)}
        ORDER BY seq DESC LIMIT ${f.limit}`;
      return [...rows];
    },
    async head(appId) {
      const [h] = await sql<AuditHead[]>`SELECT seq, hash, pruned_seq, pruned_hash FROM audit_heads WHERE app_id = ${appId}`;
      return h;
    },
    async chain(appId, afterSeq, limit) {
      return [...(await sql<AuditEntryRow[]>`SELECT ${sql.unsafe(COLUMNS)} FROM audit_log WHERE app_id = ${appId} AND seq > ${afterSeq} ORDER BY seq LIMIT ${limit}`)];
    },
    async prune(appId, before) {
      return sql.begin(async (tx) => {
        // Under the head's lock: an append meanwhile waits, so the cut and the head agree.
        const [head] = await tx`SELECT 1 FROM audit_heads WHERE app_id = ${appId} FOR UPDATE`;
        if (!head) return 0;
        const [last] = await tx<{ seq: number; hash: string }[]>`SELECT seq, hash FROM audit_log WHERE app_id = ${appId} AND at < ${before} ORDER BY seq DESC LIMIT 1`;
        if (!last) return 0;
        const dropped = (await tx`DELETE FROM audit_log WHERE app_id = ${appId} AND seq <= ${last.seq}`).count;
        await tx`UPDATE audit_heads SET pruned_seq = ${last.seq}, pruned_hash = ${last.hash} WHERE app_id = ${appId}`;
        return dropped;
      });
    },
    async apps() {
      return (await sql<{ appId: string }[]>`SELECT app_id FROM audit_heads ORDER BY app_id`).map((r) => r.appId);
    },
  };
}

export function createPgCronRepo(sql: PgSql): CronRepository {
  return {
    async claim(name, slot, node, now) {
      // The primary key (name, slot) decides: of nodes claiming together, one inserts.
      const rows = await sql`INSERT INTO cron_runs (name, slot, node, started_at, status) VALUES (${name}, ${slot}, ${node}, ${now}, 'running') ON CONFLICT DO NOTHING RETURNING name`;
      return rows.length > 0;
    },
    async finish(name, slot, status, error, now) {
      await sql`UPDATE cron_runs SET status = ${status}, error = ${error}, finished_at = ${now} WHERE name = ${name} AND slot = ${slot}`;
    },
    async recent(limit) {
      return [
        ...(await sql<CronRunRow[]>`SELECT name, slot, node, started_at, finished_at, status, error FROM
          (SELECT *, row_number() OVER (PARTITION BY name ORDER BY slot DESC) AS n FROM cron_runs) r WHERE n <= ${limit} ORDER BY name, slot DESC`),
      ];
    },
    async prune(before) {
      return (await sql`DELETE FROM cron_runs WHERE started_at < ${before}`).count;
    },
  };
}
