import type { PgSql, PgTx } from "./connection.ts";
import type { RealtimeRepository } from "../repositories.ts";
import type { NewRealtimeChange, RealtimeChangeRow, RealtimeTicketRow } from "../types.ts";
import { FEED_LOCK } from "../shared.ts";
import { CHANGES_CHANNEL } from "./changes.ts";

const COLUMNS = "seq, app_id, tenant_id, kind, collection, record_id, data, before, at";

/**
 * Appends changes in the caller's transaction. The feed lock is taken first and held to the
 * commit, so appends commit in `seq` order and a node tailing `seq > last` never passes a
 * change that commits later with a smaller seq. Records' writes call it last in their
 * transaction (after every row lock), so it never waits while holding a row another writer
 * waits for. The `r` notification reaches every node at the commit.
 */
export async function appendChanges(q: PgSql | PgTx, changes: NewRealtimeChange[]): Promise<number> {
  let seq = 0;
  for (const c of changes) {
    const [r] = await q<{ seq: number }[]>`INSERT INTO realtime_changes (app_id, tenant_id, kind, collection, record_id, data, before, at)
      SELECT ${c.appId}, ${c.tenantId}, ${c.kind}, ${c.collection}, ${c.recordId}, ${c.data}, ${c.before}, ${c.at}::bigint
      FROM (SELECT pg_advisory_xact_lock(${String(FEED_LOCK)}::bigint), pg_notify(${CHANGES_CHANNEL}, 'r')) AS l
      RETURNING seq`;
    seq = r!.seq;
  }
  return seq;
}

export function createPgRealtimeRepo(sql: PgSql): RealtimeRepository {
  return {
    append: (change) => sql.begin((tx) => appendChanges(tx, [change])),
    async tail(seq, limit) {
      return [...(await sql.unsafe<RealtimeChangeRow[]>(`SELECT ${COLUMNS} FROM realtime_changes WHERE seq > $1::bigint ORDER BY seq LIMIT $2::bigint`, [seq, limit] as never[]))];
    },
    async changesOf(appId, tenantId, seq, limit) {
      return [
        ...(await sql.unsafe<RealtimeChangeRow[]>(
          `SELECT ${COLUMNS} FROM realtime_changes WHERE tenant_id = $1::text AND app_id = $2::text AND seq > $3::bigint ORDER BY seq LIMIT $4::bigint`,
          [tenantId, appId, seq, limit] as never[],
        )),
      ];
    },
    async head() {
      const [r] = await sql<{ head: number }[]>`SELECT COALESCE(MAX(seq), 0)::bigint AS head FROM realtime_changes`;
      const [f] = await sql<{ prunedThrough: number }[]>`SELECT pruned_through FROM realtime_feed WHERE id = 1`;
      return Math.max(r!.head, f?.prunedThrough ?? 0);
    },
    async prune(before) {
      await sql.begin(async (tx) => {
        const [r] = await tx<{ last: number | null }[]>`WITH d AS (DELETE FROM realtime_changes WHERE at < ${before} RETURNING seq) SELECT MAX(seq)::bigint AS last FROM d`;
        if (r?.last != null) await tx`UPDATE realtime_feed SET pruned_through = GREATEST(pruned_through, ${r.last}::bigint) WHERE id = 1`;
      });
    },
    async prunedThrough() {
      const [f] = await sql<{ prunedThrough: number }[]>`SELECT pruned_through FROM realtime_feed WHERE id = 1`;
      return f?.prunedThrough ?? 0;
    },
    async addTicket(hash, t) {
      await sql`INSERT INTO realtime_tickets (hash, app_id, tenant_id, session_id, expires_at) VALUES (${hash}, ${t.appId}, ${t.tenantId}, ${t.sessionId}, ${t.expiresAt})`;
    },
    async takeTicket(hash, now) {
      const [r] = await sql<RealtimeTicketRow[]>`DELETE FROM realtime_tickets WHERE hash = ${hash} RETURNING app_id, tenant_id, session_id, expires_at`;
      return r && r.expiresAt > now ? r : undefined;
    },
    async purgeTickets(now) {
      return (await sql`DELETE FROM realtime_tickets WHERE expires_at <= ${now}`).count;
    },
    async signal(payload) {
      await sql`SELECT pg_notify(${CHANGES_CHANNEL}, ${payload})`;
    },
    async announce(appId, until) {
      await sql`INSERT INTO realtime_interest AS i (app_id, until) SELECT ${appId}, ${until}::bigint FROM (SELECT pg_notify(${CHANGES_CHANNEL}, ${`r+:${appId}`})) AS n
        ON CONFLICT (app_id) DO UPDATE SET until = GREATEST(i.until, excluded.until)`;
    },
    async interest(now) {
      return [...(await sql<{ appId: string; until: number }[]>`SELECT app_id, until FROM realtime_interest WHERE until > ${now}`)];
    },
    async endedSessions(sessions, now) {
      const rows = await sql<{ id: string }[]>`SELECT u.id FROM unnest(${sessions.map((s) => s.id)}::text[], ${sessions.map((s) => s.tenantId)}::text[]) AS u(id, tenant_id)
        WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = u.id AND s.tenant_id = u.tenant_id AND s.ended_at IS NULL AND s.expires_at > ${now})`;
      return rows.map((r) => r.id);
    },
  };
}
