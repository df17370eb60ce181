import type { PgSql, PgTx } from "./connection.ts";
import type { RecordsRepository } from "../repositories.ts";
import type { BatchOutcome, BatchWrite, KeptReply, RecordRow, RecordScope } from "../types.ts";
import { incrementUsageIn } from "./billing.ts";
import { searchDocument } from "../../data/text.ts";

import type { Condition, Json, SortKey } from "../../data/query.ts";
import { afterSql, orderSql, Params, pinnedField, whereSql } from "./records-sql.ts";
import { PG_INDEX_NAME, pgFieldIndex, pgIndexPrefix } from "./record-indexes.ts";
import { createPgAutoIndexes } from "./auto-indexes.ts";
import type { PgChanges } from "./changes.ts";
import { createIndexDdl } from "./index-ddl.ts";
import { batchStep, feedRecord, QuotaReached, UniqueConflict, valueAtPath } from "../shared.ts";
import { appendChanges } from "./realtime.ts";
import type { NewRealtimeChange } from "../types.ts";
import { createVersionedTotals } from "./totals.ts";

const COLUMNS = "seq, id, data, created_at, updated_at";

/** A page row with its scope's version and the total; one row of NULLs when the page is empty. */
type ListRow = { version: number; total: number } & { [K in keyof RecordRow]: RecordRow[K] } & { id: string | null };

type Runner = PgSql | PgTx;

/** The realtime changes of one transaction's writes, appended just before it commits (realtime.ts appendChanges). */
type Feed = NewRealtimeChange[];

/** The change of a record write, when its scope is fed (RecordScope.feed). */
function noteChange(feed: Feed | undefined, scope: RecordScope, kind: "created" | "updated" | "deleted", id: string, after: RecordRow | undefined, before: RecordRow | undefined, now: number) {
  if (!feed || !scope.feed) return;
  feed.push({ appId: scope.appId, tenantId: scope.tenantId, kind, collection: scope.collection, recordId: id, data: after ? feedRecord(after) : null, before: before ? feedRecord(before) : null, at: now });
}
/** Filters make SQL text vary without bound, so these statements are not kept prepared. */
const run = <T>(q: Runner, text: string, params: unknown[]) => q.unsafe<T[]>(text, params as never[], { prepare: false });

/** Optimistic attempts of an update before it takes the row's lock instead. */
const OPTIMISTIC_ATTEMPTS = 3;

/** List texts prepared per period, and texts remembered as seen once. */
const PREPARED_LISTS = 500;
const SEEN_LISTS = 5_000;
/** Both sets start over this often; the driver recycles connections, which drops their statements. */
const PREPARED_PERIOD_MS = 3600 * 1000;

/**
 * Which list texts run as prepared statements. Planning a list (its typed expressions, the
 * expression indexes to match) costs PostgreSQL more than running it, so a text asked for a
 * second time is prepared and planned once per connection. Texts vary with filters, so the
 * set is bounded: past PREPARED_LISTS in a period, new texts run unprepared, as before.
 */
function createPreparedTexts(now: () => number = Date.now) {
  const seen = new Set<string>();
  const prepared = new Set<string>();
  let since = now();
  return (text: string): boolean => {
    if (now() - since > PREPARED_PERIOD_MS) {
      seen.clear();
      prepared.clear();
      since = now();
    }
    if (prepared.has(text)) return true;
    if (seen.has(text) && prepared.size < PREPARED_LISTS) {
      prepared.add(text);
      return true;
    }
    if (seen.size < SEEN_LISTS) seen.add(text);
    return false;
  };
}

export function createPgRecordsRepo(sql: PgSql, changes?: PgChanges): RecordsRepository {
  const totals = createVersionedTotals();
  const preparedText = createPreparedTexts();
  const ddl = createIndexDdl(sql);
  const autos = createPgAutoIndexes(sql, ddl);
  changes?.on((p) => {
    if (p === "i" || p === "*") autos.changed();
  });

  /** The scope with the collection's automatic indexes among its indexed fields (the SQL then names the app and collection literally, as their partial indexes need). */
  function withAuto(scope: RecordScope, now: number): RecordScope {
    const auto = autos.paths(scope.appId, scope.collection, now);
    return auto === undefined || auto.size === 0 ? scope : { ...scope, indexed: new Set([...scope.indexed, ...auto]) };
  }
  /** Fields a list filters or sorts on. */
  const fieldsOf = (conditions: Condition[], sort: SortKey[]) => [
    ...new Set([...conditions.map((c) => c.target), ...sort.map((k) => k.target)].flatMap((t) => (t.kind === "field" ? [t.path] : []))),
  ];
  const byId = async (q: Runner, scope: RecordScope, id: string, lock = false) => {
    const [r] = lock
      ? await q<RecordRow[]>`SELECT seq, id, data, created_at, updated_at FROM records
          WHERE id = ${id} AND app_id = ${scope.appId} AND tenant_id = ${scope.tenantId} AND collection = ${scope.collection} FOR UPDATE`
      : await q<RecordRow[]>`SELECT seq, id, data, created_at, updated_at FROM records
          WHERE id = ${id} AND app_id = ${scope.appId} AND tenant_id = ${scope.tenantId} AND collection = ${scope.collection}`;
    return r;
  };

  /**
   * Unique fields are checked by a query, like on SQLite; writers of the same value take
   * turns on a transaction-scoped advisory lock named by the scope, field and value, so two
   * concurrent writes of one value cannot both pass the check.
   */
  async function assertUnique(tx: Runner, scope: RecordScope, data: Record<string, unknown>, unique: readonly string[], exceptSeq: number) {
    for (const field of unique) {
      const value = valueAtPath(data, field);
      if (value === undefined || value === null) continue;
      // The lock and the check are sent together; PostgreSQL runs the check (with its own
      // snapshot) once the lock is held.
      const locked = tx`SELECT pg_advisory_xact_lock(hashtextextended(${uniqueKey(scope, field, value as Json)}, 0))`;
      const w = whereSql(scope, [{ target: { kind: "field", path: field }, op: "$eq", value }]);
      const text = `SELECT 1 FROM records WHERE ${w.sql} AND seq <> $${w.params.length + 1}::bigint LIMIT 1`;
      const found = tx.unsafe(text, [...w.params, exceptSeq] as never[], { prepare: preparedText(text) });
      await locked;
      if ((await found).length > 0) throw new UniqueConflict(field);
    }
  }

  /** The advisory lock's name for writers of one value of a unique field in a scope. */
  const uniqueKey = (scope: RecordScope, field: string, value: Json) => JSON.stringify([scope.appId, scope.tenantId, scope.collection, field, value]);

  /** The record's words in record_search, when its collection has search on (scope.search). */
  async function indexText(tx: Runner, scope: RecordScope, seq: number, data: unknown, language = scope.search) {
    if (language === undefined) return;
    const doc = searchDocument(data, language);
    await tx`INSERT INTO record_search (seq, app_id, collection, lang, tsv, fields)
      VALUES (${seq}, ${scope.appId}, ${scope.collection}, ${language}, array_to_tsvector(${doc.words}::text[]), ${JSON.stringify(doc.fields)}::text::jsonb)
      ON CONFLICT (seq) DO UPDATE SET lang = excluded.lang, tsv = excluded.tsv, fields = excluded.fields`;
  }

  /**
   * The quota is checked by the INSERT itself (it inserts nothing past the cap): with no
   * unique field to check first, a create is one round trip.
   */
  async function insertRow(tx: Runner, scope: RecordScope, id: string, data: Record<string, unknown>, now: number, unique: readonly string[], cap: number | null, feed?: Feed): Promise<RecordRow> {
    await assertUnique(tx, scope, data, unique, -1);
    const text = JSON.stringify(data);
    const [r] =
      cap === null
        ? await tx<{ seq: number }[]>`INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
            VALUES (${id}, ${scope.appId}, ${scope.tenantId}, ${scope.collection}, ${text}, ${now}, ${now}) RETURNING seq`
        : await tx<{ seq: number }[]>`INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
            SELECT ${id}, ${scope.appId}, ${scope.tenantId}, ${scope.collection}, ${text}, ${now}::bigint, ${now}::bigint
            WHERE (SELECT COALESCE(SUM(records), 0) FROM record_scopes WHERE tenant_id = ${scope.tenantId} AND app_id = ${scope.appId}) < ${cap}
            RETURNING seq`;
    if (!r) throw new QuotaReached(cap!);
    await indexText(tx, scope, r.seq, data);
    const row = { seq: r.seq, id, data: text, createdAt: now, updatedAt: now };
    noteChange(feed, scope, "created", id, row, undefined, now);
    return row;
  }

  async function updateRow(tx: PgTx, scope: RecordScope, row: RecordRow, transform: (d: Record<string, unknown>) => Record<string, unknown>, now: number, unique: readonly string[], feed?: Feed) {
    const next = transform(JSON.parse(row.data) as Record<string, unknown>);
    await assertUnique(tx, scope, next, unique, row.seq);
    const text = JSON.stringify(next);
    await tx`UPDATE records SET data = ${text}, updated_at = ${now} WHERE seq = ${row.seq}`;
    await indexText(tx, scope, row.seq, next);
    const updated = { ...row, data: text, updatedAt: now };
    noteChange(feed, scope, "updated", row.id, updated, row, now);
    return updated;
  }

  async function upsertRow(tx: PgTx, feed: Feed | undefined, ...[scope, key, newId, data, transform, now, unique, cap]: Parameters<RecordsRepository["upsert"]>) {
    // The key value's lock first: two upserts of one key take turns, the second updates.
    // The lookup is sent with the lock and runs, with its own snapshot, once it is held.
    const locked = tx`SELECT pg_advisory_xact_lock(hashtextextended(${uniqueKey(scope, key.field, key.value)}, 0))`;
    const w = whereSql(scope, [{ target: { kind: "field", path: key.field }, op: "$eq", value: key.value }]);
    const text = `SELECT ${COLUMNS} FROM records WHERE ${w.sql} ORDER BY seq LIMIT 2 FOR UPDATE`;
    const found = tx.unsafe<RecordRow[]>(text, w.params as never[], { prepare: preparedText(text) });
    await locked;
    const [existing, duplicate] = await found;
    // The lookup already answers the unique check of a scalar key (as on SQLite): no record
    // holds the value, or exactly one does. Only the other unique fields need their own query.
    const settled = !duplicate && (key.value === null || typeof key.value !== "object");
    const others = settled ? unique.filter((f) => f !== key.field) : unique;
    if (existing) return { row: await updateRow(tx, scope, existing, transform, now, others, feed), created: false };
    return { row: await insertRow(tx, scope, newId, data, now, others, cap, feed), created: true };
  }

  async function removeRow(q: Runner, scope: RecordScope, id: string, feed?: Feed, now = 0): Promise<boolean> {
    if (!feed || !scope.feed) {
      return (await q`DELETE FROM records WHERE id = ${id} AND app_id = ${scope.appId} AND tenant_id = ${scope.tenantId} AND collection = ${scope.collection}`).count > 0;
    }
    const [gone] = await q<RecordRow[]>`DELETE FROM records WHERE id = ${id} AND app_id = ${scope.appId} AND tenant_id = ${scope.tenantId} AND collection = ${scope.collection}
      RETURNING seq, id, data, created_at, updated_at`;
    if (gone) noteChange(feed, scope, "deleted", id, undefined, gone, now);
    return gone !== undefined;
  }

  /** `write` in a transaction that appends its realtime changes last, before the commit. */
  const fed = <T>(write: (tx: PgTx, feed: Feed) => Promise<T>) =>
    sql.begin(async (tx) => {
      const feed: Feed = [];
      const result = await write(tx, feed);
      if (feed.length > 0) await appendChanges(tx, feed);
      return result;
    }) as Promise<T>;

  /** One write of a batch, as its single-write method does it, inside the batch's transaction. */
  async function write(tx: PgTx, w: BatchWrite, now: number, feed: Feed): Promise<BatchOutcome> {
    switch (w.kind) {
      case "insert":
        return insertRow(tx, w.scope, w.id, w.data, now, w.unique, w.cap, feed);
      case "update": {
        const row = await byId(tx, w.scope, w.id, true);
        return row && updateRow(tx, w.scope, row, w.transform, now, w.unique, feed);
      }
      case "upsert":
        return upsertRow(tx, feed, w.scope, w.key, w.newId, w.data, w.transform, now, w.unique, w.cap);
      case "remove":
        return removeRow(tx, w.scope, w.id, feed, now);
      case "usage":
        return incrementUsageIn(tx, w.usage);
    }
  }

  async function dropIndex(name: string) {
    if (!PG_INDEX_NAME.test(name)) throw new Error(`postgres records: refusing to drop index ${JSON.stringify(name)}`);
    await ddl.drop(name);
  }
  const indexNames = async (q: Runner, prefix: string) =>
    (await q<{ indexname: string }[]>`SELECT indexname FROM pg_indexes WHERE tablename = 'records' AND schemaname = current_schema() AND starts_with(indexname, ${prefix})`).map(
      (r) => r.indexname,
    );

  return {
    get: (scope, id) => byId(sql, scope, id),
    // One statement, so one snapshot, one round trip: the scope's version, the total (counted
    // only when the version differs from the one a kept total was counted at), and the page,
    // cut at the byte budget in the database. The page's rows are numbered as the ordered,
    // limited subquery yields them (row_number() OVER (), no second sort of its expressions);
    // the differential test against SQLite (postgres-records.test.ts) checks the order.
    async list(original, conditions, sort, page, now) {
      const scope = withAuto(original, now);
      const fields = fieldsOf(conditions, sort);
      if (fields.length > 0) {
        const auto = autos.paths(scope.appId, scope.collection, now);
        if (auto) autos.touch(scope.appId, scope.collection, fields.filter((f) => auto.has(f)), now);
        const missing = fields.filter((f) => !scope.indexed.has(f));
        if (missing.length > 0) autos.consider(scope, missing, now);
      }
      autos.sweep(now);
      const numbered = new Params();
      const w = whereSql(scope, conditions, numbered);
      const scopeKey = `${scope.appId}\u0000${scope.tenantId}\u0000${scope.collection}`;
      const filterKey = conditions.length === 0 ? "" : `${w.sql}\u0000${JSON.stringify(w.params)}`;
      // A cursor page starts past its cursor; the total still counts every match of the filter.
      const after = page.after ? ` AND ${afterSql(page.after, numbered)}` : "";
      const params = [...numbered.values];
      const p = (v: unknown, cast: string) => `$${params.push(v)}::${cast}`;
      const kept = filterKey === "" ? undefined : totals.get(scopeKey, filterKey);
      const count = `(SELECT COUNT(*) FROM records WHERE ${w.sql})`;
      const total =
        filterKey === "" ? "s.records" : kept ? `CASE WHEN s.version = ${p(kept.version, "bigint")} THEN ${p(kept.total, "bigint")} ELSE ${count} END` : count;
      const order = orderSql(sort, pinnedField(scope, conditions, sort));
      const text = `WITH s AS (SELECT COALESCE(SUM(writes), 0)::bigint AS version, COALESCE(SUM(records), 0)::bigint AS records FROM record_scopes
                    WHERE tenant_id = ${p(scope.tenantId, "text")} AND app_id = ${p(scope.appId, "text")} AND collection = ${p(scope.collection, "text")})
         SELECT s.version, ${total} AS total, p.seq, p.id, p.data, p.created_at, p.updated_at
         FROM s LEFT JOIN LATERAL (
           SELECT q.*, SUM(char_length(q.data)) OVER (ORDER BY q.n) AS run FROM (
             SELECT r.seq, r.id, r.data, r.created_at, r.updated_at, row_number() OVER () AS n
             FROM (SELECT seq, id, data, doc, created_at, updated_at FROM records WHERE ${w.sql}${after} ORDER BY ${order}
                   LIMIT ${p(page.limit, "bigint")} OFFSET ${p(page.offset, "bigint")}) r
           ) q
         ) p ON p.n = 1 OR p.run <= ${p(page.maxBytes, "bigint")}
         ORDER BY p.n`;
      const rows = await sql.unsafe<ListRow[]>(text, params as never[], { prepare: preparedText(text) });
      const first = rows[0]!;
      if (filterKey !== "" && kept?.version !== first.version) totals.set(scopeKey, filterKey, { version: first.version, total: first.total });
      const records: RecordRow[] = [];
      for (const r of rows) if (r.id !== null) records.push({ seq: r.seq, id: r.id, data: r.data, createdAt: r.createdAt, updatedAt: r.updatedAt });
      return { records, total: first.total };
    },
    // Without unique fields to check, the insert is one autocommitted statement (one round
    // trip instead of BEGIN, INSERT, COMMIT); its triggers still run in its transaction.
    insert: (scope, id, data, now, unique, cap) =>
      scope.feed
        ? fed((tx, feed) => insertRow(tx, scope, id, data, now, unique, cap, feed))
        : scope.search !== undefined || unique.some((f) => valueAtPath(data, f) !== undefined && valueAtPath(data, f) !== null)
        ? sql.begin((tx) => insertRow(tx, scope, id, data, now, unique, cap))
        : insertRow(sql, scope, id, data, now, [], cap),
    async update(scope, id, transform, now, unique) {
      // Without unique fields, two autocommitted statements instead of BEGIN, a locking read,
      // the write and COMMIT: the write only lands on the row version that was read (xmin),
      // and a concurrent write in between makes it read again. A collection with search on
      // writes the record's words with it, in one transaction.
      // A fed scope takes the locking path: its change is appended in the write's transaction.
      for (let attempt = 0; unique.length === 0 && scope.search === undefined && !scope.feed && attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
        const [row] = await sql<(RecordRow & { version: string })[]>`SELECT seq, id, data, created_at, updated_at, xmin::text AS version FROM records
          WHERE id = ${id} AND app_id = ${scope.appId} AND tenant_id = ${scope.tenantId} AND collection = ${scope.collection}`;
        if (!row) return undefined;
        const text = JSON.stringify(transform(JSON.parse(row.data) as Record<string, unknown>));
        const written = await sql`UPDATE records SET data = ${text}, updated_at = ${now} WHERE seq = ${row.seq} AND xmin = ${row.version}::xid`;
        if (written.count === 1) return { seq: row.seq, id: row.id, data: text, createdAt: row.createdAt, updatedAt: now };
      }
      return fed(async (tx, feed) => {
        const row = await byId(tx, scope, id, true);
        return row && updateRow(tx, scope, row, transform, now, unique, feed);
      });
    },
    upsert: (scope, key, newId, data, transform, now, unique, cap) => fed((tx, feed) => upsertRow(tx, feed, scope, key, newId, data, transform, now, unique, cap)),
    remove: (scope, id, now = Date.now()) => (scope.feed ? fed((tx, feed) => removeRow(tx, scope, id, feed, now)) : removeRow(sql, scope, id)),
    batch: (writes, now, check, claim) =>
      fed(async (tx, feed): Promise<BatchOutcome[] | "taken"> => {
        if (claim) {
          const k = claim.key;
          const claimed = await tx`INSERT INTO idempotency_keys (tenant_id, app_id, key_hash, request_hash, status, body, created_at)
            VALUES (${k.tenantId}, ${k.appId}, ${k.keyHash}, ${k.requestHash}, 0, NULL, ${now})
            ON CONFLICT (tenant_id, app_id, key_hash) DO UPDATE SET request_hash = excluded.request_hash, status = 0, body = NULL, created_at = excluded.created_at
            WHERE idempotency_keys.created_at < ${k.expiredBefore}`;
          // Taken: a concurrent first request with the key waited for above has committed its answer.
          if (claimed.count === 0) return "taken";
        }
        const outcomes: BatchOutcome[] = [];
        for (const [i, w] of writes.entries()) outcomes.push(await batchStep(i, () => write(tx, w, now, feed), check));
        if (claim) {
          const { status, body } = claim.reply(outcomes);
          await tx`UPDATE idempotency_keys SET status = ${status}, body = ${body}
            WHERE tenant_id = ${claim.key.tenantId} AND app_id = ${claim.key.appId} AND key_hash = ${claim.key.keyHash}`;
        }
        return outcomes;
      }),
    // As SQLite's syncSearch: a chunk of records per transaction.
    async syncSearch(appId, wanted) {
      await sql`DELETE FROM record_search WHERE app_id = ${appId} AND NOT (collection = ANY(${wanted.map((w) => w.collection)}::text[]))`;
      for (const { collection, language } of wanted) {
        const scope: RecordScope = { appId, tenantId: "", collection, indexed: new Set() };
        for (let after = 0; ; ) {
          const rows = await sql<{ seq: number; data: string }[]>`SELECT r.seq, r.data FROM records r LEFT JOIN record_search s ON s.seq = r.seq
            WHERE r.app_id = ${appId} AND r.collection = ${collection} AND r.seq > ${after} AND (s.seq IS NULL OR s.lang <> ${language}) ORDER BY r.seq LIMIT 500`;
          if (rows.length === 0) break;
          await sql.begin(async (tx) => {
            for (const r of rows) await indexText(tx, scope, r.seq, JSON.parse(r.data), language);
          });
          after = rows.at(-1)!.seq;
        }
      }
    },
    async keptReply(appId, tenantId, keyHash, notBefore) {
      const [r] = await sql<KeptReply[]>`SELECT request_hash, status, body FROM idempotency_keys
        WHERE tenant_id = ${tenantId} AND app_id = ${appId} AND key_hash = ${keyHash} AND created_at >= ${notBefore}`;
      return r;
    },
    async purgeKeptReplies(before) {
      return (await sql`DELETE FROM idempotency_keys WHERE created_at < ${before}`).count;
    },
    createShareLink: (scope, recordId, link, tokenHash, maxLinks) =>
      sql.begin(async (tx): Promise<boolean | "full"> => {
        // The record's row lock makes concurrent links of one record take turns at the cap.
        if (!(await byId(tx, scope, recordId, true))) return false;
        await tx`DELETE FROM share_links WHERE record_id = ${recordId} AND expires_at IS NOT NULL AND expires_at <= ${link.createdAt}`;
        const [c] = await tx<{ n: number }[]>`SELECT COUNT(*) AS n FROM share_links WHERE record_id = ${recordId}`;
        if (c!.n >= maxLinks) return "full";
        await tx`INSERT INTO share_links (id, token_hash, record_id, created_at, expires_at) VALUES (${link.id}, ${tokenHash}, ${recordId}, ${link.createdAt}, ${link.expiresAt})`;
        return true;
      }),
    revokeShareLinks: (scope, recordId) =>
      sql.begin(async (tx) => {
        if (!(await byId(tx, scope, recordId, true))) return undefined;
        return (await tx`DELETE FROM share_links WHERE record_id = ${recordId}`).count;
      }),
    async findShared(tokenHash) {
      const [r] = await sql<(RecordRow & { expiresAt: number | null })[]>`
        SELECT r.seq, r.id, r.data, r.created_at, r.updated_at, s.expires_at FROM share_links s JOIN records r ON r.id = s.record_id WHERE s.token_hash = ${tokenHash}`;
      if (!r) return undefined;
      const { expiresAt, ...record } = r;
      return { record, expiresAt };
    },
    async syncIndexes(appId, fields) {
      // Built and dropped CONCURRENTLY: no app's writes wait, so not in a transaction. Nodes
      // syncing one app at once each skip what another already made (IF NOT EXISTS).
      const wanted = fields.map((f) => pgFieldIndex(appId, f.collection, f.path));
      const keep = new Set(wanted.map((i) => i.name));
      for (const name of await indexNames(sql, pgIndexPrefix(appId))) if (!keep.has(name)) await dropIndex(name);
      for (const index of wanted) await ddl.build(index);
      await autos.dropDeclared(appId, fields);
    },
    async dropIndexesExcept(appIds) {
      const live = new Set(appIds.map(pgIndexPrefix));
      for (const name of await indexNames(sql, "records_f_")) if (!live.has(name.slice(0, 23))) await dropIndex(name);
      const gone = await sql<{ appId: string }[]>`SELECT DISTINCT app_id FROM record_auto_indexes WHERE NOT (app_id = ANY(${appIds}::text[]))`;
      for (const { appId } of gone) await autos.dropApp(appId);
    },
    dropAutoIndexes: (appId) => autos.dropApp(appId),
    autoIndexes: (appId) => autos.list(appId),
    autoIndexesSettled: () => autos.settled(),
    async explainList(scope, conditions, sort) {
      const w = whereSql(scope, conditions, new Params());
      const n = w.params.length;
      const rows = await run<{ "QUERY PLAN": string; queryPlan?: string }>(
        sql,
        `EXPLAIN SELECT ${COLUMNS} FROM records WHERE ${w.sql} ORDER BY ${orderSql(sort, pinnedField(scope, conditions, sort))} LIMIT $${n + 1}::bigint OFFSET $${n + 2}::bigint`,
        [...w.params, 50, 0],
      );
      return rows.map((r) => String(Object.values(r)[0]));
    },
  };
}
