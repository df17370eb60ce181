import type { SqliteDb } from "./connection.ts";
import type { DeliveryOutcome, DeliveryRow, QueuedEvent, RawDelivery, WebhookConfigRow } from "../types.ts";

interface RawConfig {
  app_id: string;
  url: string;
  secret_sealed: string;
  secret_created_at: number;
  created_at: number;
  updated_at: number;
}

interface RawEvent {
  id: string;
  app_id: string;
  event: string;
  tenant_id: string | null;
  data: string;
  created_at: number;
}

const toConfig = (r: RawConfig): WebhookConfigRow => ({
  appId: r.app_id,
  url: r.url,
  secretSealed: r.secret_sealed,
  secretCreatedAt: r.secret_created_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toEvent = (r: RawEvent): QueuedEvent => ({
  id: r.id,
  appId: r.app_id,
  event: r.event,
  tenantId: r.tenant_id,
  data: r.data,
  createdAt: r.created_at,
});

/** A log page reads every column but the sealed body, which is opened one delivery at a time. */
export const DELIVERY_LIST_COLUMNS = "seq, id, app_id, event, tenant_id, status, url, status_code, error, duration_ms, created_at, finished_at, NULL AS body_sealed";

export const toDelivery = (r: RawDelivery): DeliveryRow => ({
  id: r.id,
  appId: r.app_id,
  event: r.event,
  tenantId: r.tenant_id,
  status: r.status,
  url: r.url,
  statusCode: r.status_code,
  error: r.error,
  durationMs: r.duration_ms,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
  bodySealed: r.body_sealed,
});

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;

export function createWebhooksRepo(db: SqliteDb) {
  const q = {
    config: db.prepare<[string], RawConfig>("SELECT * FROM webhook_configs WHERE app_id = ?"),
    insertConfig: db.prepare<[string, string, string, number, number, number]>(
      "INSERT INTO webhook_configs (app_id, url, secret_sealed, secret_created_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    setUrl: db.prepare<[string, number, string]>("UPDATE webhook_configs SET url = ?, updated_at = ? WHERE app_id = ?"),
    setSecret: db.prepare<[string, number, number, string]>(
      "UPDATE webhook_configs SET secret_sealed = ?, secret_created_at = ?, updated_at = ? WHERE app_id = ?",
    ),
    removeConfig: db.prepare<[string]>("DELETE FROM webhook_configs WHERE app_id = ?"),
    enqueue: db.prepare<[string, string, string, string | null, string, number]>(
      "INSERT INTO webhook_events (id, app_id, event, tenant_id, data, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    ),
    oldest: db.prepare<[number], RawEvent>("SELECT * FROM webhook_events ORDER BY seq LIMIT ?"),
    dequeue: db.prepare<[string]>("DELETE FROM webhook_events WHERE id = ?"),
    insertSending: db.prepare<[string, string, string, string | null, number, number]>(
      "INSERT INTO webhook_deliveries (id, app_id, event, tenant_id, status, created_at, claimed_at) VALUES (?, ?, ?, ?, 'sending', ?, ?)",
    ),
    finish: db.prepare<[string, string | null, number | null, string | null, number | null, number, string | null, string]>(
      "UPDATE webhook_deliveries SET status = ?, url = ?, status_code = ?, error = ?, duration_ms = ?, finished_at = ?, body_sealed = ? WHERE id = ? AND status = 'sending'",
    ),
    one: db.prepare<[string, string], RawDelivery>("SELECT * FROM webhook_deliveries WHERE app_id = ? AND id = ?"),
    dropBodies: db.prepare<[number]>("UPDATE webhook_deliveries SET body_sealed = NULL WHERE body_sealed IS NOT NULL AND created_at < ?"),
    dropRows: db.prepare<[number]>("DELETE FROM webhook_deliveries WHERE created_at < ? AND status <> 'sending'"),
    sweep: db.prepare<[string, number, number]>(
      "UPDATE webhook_deliveries SET status = 'failed', error = ?, finished_at = ? WHERE status = 'sending' AND claimed_at < ?",
    ),
    list: db.prepare<[string, number, number], RawDelivery>(
      `SELECT ${DELIVERY_LIST_COLUMNS} FROM webhook_deliveries WHERE app_id = ? ORDER BY created_at DESC, seq DESC LIMIT ? OFFSET ?`,
    ),
    count: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE app_id = ?"),
    ofTenant: db.prepare<[string, string, number, number], RawDelivery>(
      `SELECT ${DELIVERY_LIST_COLUMNS} FROM webhook_deliveries WHERE app_id = ? AND tenant_id = ? ORDER BY created_at, seq LIMIT ? OFFSET ?`,
    ),
    queued: db.prepare<[string], { n: number }>("SELECT COUNT(*) AS n FROM webhook_events WHERE app_id = ?"),
    depth: db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM webhook_events"),
  };

  const setUrlTx = db.transaction((appId: string, url: string, sealedIfNew: string, now: number) => {
    if (q.setUrl.run(url, now, appId).changes > 0) return false;
    q.insertConfig.run(appId, url, sealedIfNew, now, now, now);
    return true;
  });

  // Moving an event from the queue to the log in one transaction is what makes a claim
  // exclusive: two dispatchers can never both send it.
  const claimTx = db.transaction((limit: number, now: number) => {
    const rows = q.oldest.all(limit);
    for (const r of rows) {
      q.dequeue.run(r.id);
      q.insertSending.run(r.id, r.app_id, r.event, r.tenant_id, r.created_at, now);
    }
    return rows.map(toEvent);
  });

  return {
    async findConfig(appId: string): Promise<WebhookConfigRow | undefined> {
      const r = q.config.get(appId);
      return r && toConfig(r);
    },
    /** Sets the URL; creates the config with `sealedSecret` when there is none. True when created. */
    async setUrl(appId: string, url: string, sealedSecret: string, now: number): Promise<boolean> {
      return setUrlTx.immediate(appId, url, sealedSecret, now);
    },
    /** Replaces the secret; false when the app has no config. */
    async setSecret(appId: string, sealedSecret: string, now: number): Promise<boolean> {
      return q.setSecret.run(sealedSecret, now, now, appId).changes > 0;
    },
    async removeConfig(appId: string): Promise<boolean> {
      return q.removeConfig.run(appId).changes > 0;
    },
    async enqueue(e: QueuedEvent): Promise<void> {
      q.enqueue.run(e.id, e.appId, e.event, e.tenantId, e.data, e.createdAt);
    },
    /** Takes up to `limit` events off the queue, oldest first, logging each as `sending`. */
    async claim(limit: number, now: number): Promise<QueuedEvent[]> {
      return claimTx.immediate(limit, now);
    },
    async finish(id: string, o: DeliveryOutcome): Promise<void> {
      q.finish.run(o.status, o.url, o.statusCode, o.error, o.durationMs, o.finishedAt, o.bodySealed, id);
    },
    /** Marks deliveries still `sending` since before `claimedBefore` as failed (their process stopped). */
    async failStale(claimedBefore: number, now: number, reason: string): Promise<number> {
      return q.sweep.run(reason, now, claimedBefore).changes;
    },
    /** Newest first. */
    async listDeliveries(appId: string, limit: number, offset: number): Promise<{ deliveries: DeliveryRow[]; total: number }> {
      return { deliveries: q.list.all(appId, limit, offset).map(toDelivery), total: q.count.get(appId)!.n };
    },
    async tenantDeliveries(appId: string, tenantId: string, limit: number, offset: number): Promise<DeliveryRow[]> {
      return q.ofTenant.all(appId, tenantId, limit, offset).map(toDelivery);
    },
    /** One delivery of the app (another app's id finds nothing). */
    async findDelivery(appId: string, id: string): Promise<DeliveryRow | undefined> {
      const r = q.one.get(appId, id);
      return r && toDelivery(r);
    },
    /** Forgets bodies of events older than `bodiesBefore` and whole rows older than `rowsBefore`. */
    async prune(bodiesBefore: number, rowsBefore: number): Promise<{ bodies: number; rows: number }> {
      const rows = q.dropRows.run(rowsBefore).changes;
      return { bodies: q.dropBodies.run(bodiesBefore).changes, rows };
    },
    async queuedCount(appId: string): Promise<number> {
      return q.queued.get(appId)!.n;
    },
    async queueDepth(): Promise<number> {
      return q.depth.get()!.n;
    },
  };
}
