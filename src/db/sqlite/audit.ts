import { inTransaction, type SqliteDb } from "./connection.ts";
import type { AuditRepository, CronRepository } from "../repositories.ts";
import type { AuditEntryRow, AuditFilter, AuditHead, CronRunRow } from "../types.ts";
import { AUDIT_GENESIS } from "../shared.ts";

interface RawEntry {
  app_id: string;
  seq: number;
  id: string;
  at: number;
  actor_type: string;
  actor_id: string | null;
  action: string;
  tenant_id: string | null;
  target: string | null;
  ip: string | null;
  client: string | null;
  request_id: string | null;
  details: string | null;
  prev_hash: string;
  hash: string;
}

const toEntry = (r: RawEntry): AuditEntryRow => ({
  appId: r.app_id,
  seq: r.seq,
  id: r.id,
  at: r.at,
  actorType: r.actor_type,
  actorId: r.actor_id,
  action: r.action,
  tenantId: r.tenant_id,
  target: r.target,
  ip: r.ip,
  client: r.client,
  requestId: r.request_id,
  details: r.details,
  prevHash: r.prev_hash,
  hash: r.hash,
});

/** The filter as SQL conditions and their values, in order. */
function where(appId: string, f: AuditFilter): { sql: string; args: (string | number)[] } {
  const parts = ["app_id = ?"];
  const args: (string | number)[] = [appId];
  const add = (cond: string, value: string | number | undefined) => {
    if (value === undefined) return;
    parts.push(cond);
    args.push(value);
  };
  add("tenant_id = ?", f.tenantId);
  add("action = ?", f.action);
  // substr, not LIKE: an action prefix may hold _ or %.
  if (f.actionPrefix !== undefined) {
    parts.push("substr(action, 1, ?) = ?");
    args.push(f.actionPrefix.length, f.actionPrefix);
  }
  add("actor_type = ?", f.actorType);
  add("actor_id = ?", f.actorId);
  add("at >= ?", f.from);
  add("at < ?", f.to);
  add("seq < ?", f.beforeSeq);
  return { sql: parts.join(" AND "), args };
}

export function createAuditRepo(db: SqliteDb): AuditRepository {
  const q = {
    openHead: db.prepare<[string, string, string]>("INSERT OR IGNORE INTO audit_heads (app_id, seq, hash, pruned_seq, pruned_hash) VALUES (?, 0, ?, 0, ?)"),
    head: db.prepare<[string], { seq: number; hash: string; pruned_seq: number; pruned_hash: string }>("SELECT seq, hash, pruned_seq, pruned_hash FROM audit_heads WHERE app_id = ?"),
    insert: db.prepare(
      `INSERT INTO audit_log (app_id, seq, id, at, actor_type, actor_id, action, tenant_id, target, ip, client, request_id, details, prev_hash, hash)
       VALUES (@appId, @seq, @id, @at, @actorType, @actorId, @action, @tenantId, @target, @ip, @client, @requestId, @details, @prevHash, @hash)`,
    ),
    advance: db.prepare<[number, string, string]>("UPDATE audit_heads SET seq = ?, hash = ? WHERE app_id = ?"),
    chain: db.prepare<[string, number, number], RawEntry>("SELECT * FROM audit_log WHERE app_id = ? AND seq > ? ORDER BY seq LIMIT ?"),
    lastBefore: db.prepare<[string, number], { seq: number; hash: string }>("SELECT seq, hash FROM audit_log WHERE app_id = ? AND at < ? ORDER BY seq DESC LIMIT 1"),
    drop: db.prepare<[string, number]>("DELETE FROM audit_log WHERE app_id = ? AND seq <= ?"),
    cut: db.prepare<[number, string, string]>("UPDATE audit_heads SET pruned_seq = ?, pruned_hash = ? WHERE app_id = ?"),
    apps: db.prepare<[], string>("SELECT app_id FROM audit_heads ORDER BY app_id").pluck(),
  };
  return {
    async append(entry, seal) {
      // IMMEDIATE: the head is read under the write lock, so two processes cannot both extend it.
      return inTransaction(db, () => {
        q.openHead.run(entry.appId, AUDIT_GENESIS, AUDIT_GENESIS);
        const head = q.head.get(entry.appId)!;
        const unsealed = { ...entry, seq: head.seq + 1, prevHash: head.hash };
        const row: AuditEntryRow = { ...unsealed, hash: seal(unsealed) };
        q.insert.run(row);
        q.advance.run(row.seq, row.hash, row.appId);
        return row;
      });
    },
    async list(appId, filter) {
      const w = where(appId, filter);
      return db.prepare<(string | number)[], RawEntry>(`SELECT * FROM audit_log WHERE ${w.sql} ORDER BY seq DESC LIMIT ?`).all(...w.args, filter.limit).map(toEntry);
    },
    async head(appId): Promise<AuditHead | undefined> {
      const h = q.head.get(appId);
      return h && { seq: h.seq, hash: h.hash, prunedSeq: h.pruned_seq, prunedHash: h.pruned_hash };
    },
    async chain(appId, afterSeq, limit) {
      return q.chain.all(appId, afterSeq, limit).map(toEntry);
    },
    async prune(appId, before) {
      return inTransaction(db, () => {
        const last = q.lastBefore.get(appId, before);
        if (!last) return 0;
        const dropped = q.drop.run(appId, last.seq).changes;
        q.cut.run(last.seq, last.hash, appId);
        return dropped;
      });
    },
    async apps() {
      return q.apps.all();
    },
  };
}

interface RawRun {
  name: string;
  slot: number;
  node: string;
  started_at: number;
  finished_at: number | null;
  status: CronRunRow["status"];
  error: string | null;
}

export function createCronRepo(db: SqliteDb): CronRepository {
  const q = {
    claim: db.prepare<[string, number, string, number]>("INSERT OR IGNORE INTO cron_runs (name, slot, node, started_at, status) VALUES (?, ?, ?, ?, 'running')"),
    finish: db.prepare<[string, string | null, number, string, number]>("UPDATE cron_runs SET status = ?, error = ?, finished_at = ? WHERE name = ? AND slot = ?"),
    recent: db.prepare<[number], RawRun>(
      "SELECT * FROM (SELECT *, row_number() OVER (PARTITION BY name ORDER BY slot DESC) AS n FROM cron_runs) WHERE n <= ? ORDER BY name, slot DESC",
    ),
    prune: db.prepare<[number]>("DELETE FROM cron_runs WHERE started_at < ?"),
  };
  return {
    async claim(name, slot, node, now) {
      return q.claim.run(name, slot, node, now).changes > 0;
    },
    async finish(name, slot, status, error, now) {
      q.finish.run(status, error, now, name, slot);
    },
    async recent(limit) {
      return q.recent.all(limit).map((r) => ({ name: r.name, slot: r.slot, node: r.node, startedAt: r.started_at, finishedAt: r.finished_at, status: r.status, error: r.error }));
    },
    async prune(before) {
      return q.prune.run(before).changes;
    },
  };
}
