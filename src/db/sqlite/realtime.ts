import type { SqliteDb } from "./connection.ts";
import type { RealtimeRepository } from "../repositories.ts";
import type { NewRealtimeChange, RealtimeChangeRow, RealtimeTicketRow } from "../types.ts";
import { sessionStates } from "./session-state-cache.ts";

interface RawChange {
  seq: number;
  app_id: string;
  tenant_id: string;
  kind: string;
  collection: string | null;
  record_id: string | null;
  data: string | null;
  before: string | null;
  at: number;
}

const toChange = (r: RawChange): RealtimeChangeRow => ({
  seq: r.seq,
  appId: r.app_id,
  tenantId: r.tenant_id,
  kind: r.kind,
  collection: r.collection,
  recordId: r.record_id,
  data: r.data,
  before: r.before,
  at: r.at,
});

const COLUMNS = "seq, app_id, tenant_id, kind, collection, record_id, data, before, at";

/** The statement records.ts runs inside a write's transaction; one writer at a time, so seq order is commit order. */
export function changeAppender(db: SqliteDb) {
  const insert = db.prepare<[string, string, string, string | null, string | null, string | null, string | null, number]>(
    "INSERT INTO realtime_changes (app_id, tenant_id, kind, collection, record_id, data, before, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  return (c: NewRealtimeChange): number => Number(insert.run(c.appId, c.tenantId, c.kind, c.collection, c.recordId, c.data, c.before, c.at).lastInsertRowid);
}

export function createRealtimeRepo(db: SqliteDb): RealtimeRepository {
  const append = changeAppender(db);
  const states = sessionStates(db);
  const q = {
    tail: db.prepare<[number, number], RawChange>(`SELECT ${COLUMNS} FROM realtime_changes WHERE seq > ? ORDER BY seq LIMIT ?`),
    changesOf: db.prepare<[string, string, number, number], RawChange>(`SELECT ${COLUMNS} FROM realtime_changes WHERE tenant_id = ? AND app_id = ? AND seq > ? ORDER BY seq LIMIT ?`),
    head: db.prepare<[], number>("SELECT MAX(COALESCE((SELECT MAX(seq) FROM realtime_changes), 0), (SELECT pruned_through FROM realtime_feed WHERE id = 1))").pluck(),
    pruneLast: db.prepare<[number], number | null>("SELECT MAX(seq) FROM realtime_changes WHERE at < ?").pluck(),
    prune: db.prepare<[number]>("DELETE FROM realtime_changes WHERE at < ?"),
    mark: db.prepare<[number]>("UPDATE realtime_feed SET pruned_through = MAX(pruned_through, ?) WHERE id = 1"),
    prunedThrough: db.prepare<[], number>("SELECT pruned_through FROM realtime_feed WHERE id = 1").pluck(),
    addTicket: db.prepare<[string, string, string, string, number]>("INSERT INTO realtime_tickets (hash, app_id, tenant_id, session_id, expires_at) VALUES (?, ?, ?, ?, ?)"),
    takeTicket: db.prepare<[string], { app_id: string; tenant_id: string; session_id: string; expires_at: number }>(
      "DELETE FROM realtime_tickets WHERE hash = ? RETURNING app_id, tenant_id, session_id, expires_at",
    ),
    purgeTickets: db.prepare<[number]>("DELETE FROM realtime_tickets WHERE expires_at <= ?"),
  };
  const prune = db.transaction((before: number) => {
    const last = q.pruneLast.get(before);
    if (last === null || last === undefined) return;
    q.prune.run(before);
    q.mark.run(last);
  });
  return {
    async append(change) {
      return append(change);
    },
    async tail(seq, limit) {
      return q.tail.all(seq, limit).map(toChange);
    },
    async changesOf(appId, tenantId, seq, limit) {
      return q.changesOf.all(tenantId, appId, seq, limit).map(toChange);
    },
    async head() {
      return q.head.get() ?? 0;
    },
    async prune(before) {
      prune.immediate(before);
    },
    async prunedThrough() {
      return q.prunedThrough.get() ?? 0;
    },
    async addTicket(hash, t) {
      q.addTicket.run(hash, t.appId, t.tenantId, t.sessionId, t.expiresAt);
    },
    async takeTicket(hash, now): Promise<RealtimeTicketRow | undefined> {
      const r = q.takeTicket.get(hash);
      return r && r.expires_at > now ? { appId: r.app_id, tenantId: r.tenant_id, sessionId: r.session_id, expiresAt: r.expires_at } : undefined;
    },
    async purgeTickets(now) {
      return q.purgeTickets.run(now).changes;
    },
    async signal() {},
    async announce() {},
    async interest() {
      return [];
    },
    async endedSessions(sessions, now) {
      return sessions.filter(({ id, tenantId }) => {
        const s = states.get(id, now);
        return !s || s.endedAt !== null || s.expiresAt <= now || s.tenantId !== tenantId;
      }).map((s) => s.id);
    },
  };
}
