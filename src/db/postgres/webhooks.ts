import type { PgSql } from "./connection.ts";
import type { WebhooksRepository } from "../repositories.ts";
import type { DeliveryRow, QueuedEvent, WebhookConfigRow } from "../types.ts";

/** A log page reads every column but the sealed body, which is opened one delivery at a time. */
export const DELIVERY = "id, app_id, event, tenant_id, status, url, status_code, error, duration_ms, created_at, finished_at, NULL::text AS body_sealed";

export function createPgWebhooksRepo(sql: PgSql): WebhooksRepository {
  return {
    async findConfig(appId) {
      const [r] = await sql<WebhookConfigRow[]>`SELECT * FROM webhook_configs WHERE app_id = ${appId}`;
      return r;
    },
    async setUrl(appId, url, sealedSecret, now) {
      // xmax = 0 only on a freshly inserted row: tells a created config from an updated one.
      const [r] = await sql<{ created: boolean }[]>`
        INSERT INTO webhook_configs (app_id, url, secret_sealed, secret_created_at, created_at, updated_at)
        VALUES (${appId}, ${url}, ${sealedSecret}, ${now}, ${now}, ${now})
        ON CONFLICT (app_id) DO UPDATE SET url = excluded.url, updated_at = excluded.updated_at
        RETURNING (xmax = 0) AS created`;
      return r!.created;
    },
    async setSecret(appId, sealedSecret, now) {
      return (await sql`UPDATE webhook_configs SET secret_sealed = ${sealedSecret}, secret_created_at = ${now}, updated_at = ${now} WHERE app_id = ${appId}`).count > 0;
    },
    async removeConfig(appId) {
      return (await sql`DELETE FROM webhook_configs WHERE app_id = ${appId}`).count > 0;
    },
    async enqueue(e) {
      await sql`INSERT INTO webhook_events (id, app_id, event, tenant_id, data, created_at) VALUES (${e.id}, ${e.appId}, ${e.event}, ${e.tenantId}, ${e.data}, ${e.createdAt})`;
    },
    async claim(limit, now) {
      // SKIP LOCKED: dispatchers on several nodes each take different events, none waits,
      // and an event leaves the queue in the transaction that logs it: sent at most once.
      // The pick is MATERIALIZED, so it runs once: as a subquery the planner may run it again
      // per row (a nested loop), and each run skips the rows already taken and picks more,
      // past the limit.
      return sql.begin(async (tx) => {
        const rows = await tx<(QueuedEvent & { seq: number })[]>`
          WITH picked AS MATERIALIZED (SELECT seq FROM webhook_events ORDER BY seq LIMIT ${limit} FOR UPDATE SKIP LOCKED)
          DELETE FROM webhook_events e USING picked WHERE e.seq = picked.seq
          RETURNING e.seq, e.id, e.app_id, e.event, e.tenant_id, e.data, e.created_at`;
        const events = [...rows].sort((a, b) => a.seq - b.seq);
        for (const e of events) {
          await tx`INSERT INTO webhook_deliveries (id, app_id, event, tenant_id, status, created_at, claimed_at)
            VALUES (${e.id}, ${e.appId}, ${e.event}, ${e.tenantId}, 'sending', ${e.createdAt}, ${now})`;
        }
        return events.map(({ seq: _seq, ...e }) => e);
      });
    },
    async finish(id, o) {
      await sql`UPDATE webhook_deliveries SET status = ${o.status}, url = ${o.url}, status_code = ${o.statusCode}, error = ${o.error},
        duration_ms = ${o.durationMs}, finished_at = ${o.finishedAt}, body_sealed = ${o.bodySealed} WHERE id = ${id} AND status = 'sending'`;
    },
    async failStale(claimedBefore, now, reason) {
      return (await sql`UPDATE webhook_deliveries SET status = 'failed', error = ${reason}, finished_at = ${now} WHERE status = 'sending' AND claimed_at < ${claimedBefore}`).count;
    },
    async listDeliveries(appId, limit, offset) {
      const deliveries = await sql<DeliveryRow[]>`SELECT ${sql.unsafe(DELIVERY)} FROM webhook_deliveries WHERE app_id = ${appId}
        ORDER BY created_at DESC, seq DESC LIMIT ${limit} OFFSET ${offset}`;
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM webhook_deliveries WHERE app_id = ${appId}`;
      return { deliveries: [...deliveries], total: c!.n };
    },
    async tenantDeliveries(appId, tenantId, limit, offset) {
      return [...(await sql<DeliveryRow[]>`SELECT ${sql.unsafe(DELIVERY)} FROM webhook_deliveries WHERE app_id = ${appId} AND tenant_id = ${tenantId}
        ORDER BY created_at, seq LIMIT ${limit} OFFSET ${offset}`)];
    },
    async findDelivery(appId, id) {
      const [r] = await sql<DeliveryRow[]>`SELECT id, app_id, event, tenant_id, status, url, status_code, error, duration_ms, created_at, finished_at, body_sealed
        FROM webhook_deliveries WHERE app_id = ${appId} AND id = ${id}`;
      return r;
    },
    async prune(bodiesBefore, rowsBefore) {
      return sql.begin(async (tx) => {
        const rows = (await tx`DELETE FROM webhook_deliveries WHERE created_at < ${rowsBefore} AND status <> 'sending'`).count;
        const bodies = (await tx`UPDATE webhook_deliveries SET body_sealed = NULL WHERE body_sealed IS NOT NULL AND created_at < ${bodiesBefore}`).count;
        return { bodies, rows };
      });
    },
    async queuedCount(appId) {
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM webhook_events WHERE app_id = ${appId}`;
      return c!.n;
    },
    async queueDepth() {
      const [c] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM webhook_events`;
      return c!.n;
    },
  };
}
