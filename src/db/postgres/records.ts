import type { PgSql, PgTx } from "./connection.ts";
import type { RecordsRepository } from "../repositories.ts";
import type { BatchOutcome, BatchWrite, KeptReply, ListPage, RecordRow, RecordScope } from "../types.ts";
import { incrementUsageIn } from "./billing.ts";
import { searchDocument, tsvectorLiteral } from "../../data/text.ts";

import { isRanked, type Condition, type Json, type SortKey } from "../../data/query.ts";
import { afterSql, orderSql, Params, pinnedField, rankSql, whereSql } from "./records-sql.ts";
import { PG_INDEX_NAME, pgFieldIndex, pgIndexPrefix } from "./record-indexes.ts";
import { createPgAutoIndexes } from "./auto-indexes.ts";
import type { PgChanges } from "./changes.ts";
import { createIndexDdl } from "./index-ddl.ts";
import { batchStep, feedRecord, inBranches, QuotaReached, UniqueConflict, valueAtPath } from "../shared.ts";
import { appendChanges } from "./realtime.ts";
import type { NewRealtimeChange } from "../types.ts";
import { createVersionedTotals } from "./totals.ts";

const COLUMNS = "seq, id, data, created_at, updated_at";
/** A record as read with its row version (xmin), for a write that lands only on that version. */
type Versioned = RecordRow & { version: string };

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

/** The stripes of a tenant's record bytes (migration 15). */
const BYTE_STRIPES = 16;

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

/**
 * The page's rows in order: one statement over the filter, or, for an `$in` on an indexed
 * field (inBranches), each value's first `offset + limit` matches read from its index in
 * order and merged.
 */
function pageQuery(scope: RecordScope, conditions: Condition[], sort: SortKey[], after: string, page: ListPage, p: Params, where?: string): string {
  const ranked = isRanked(sort);
  const searched = conditions.some((c) => c.op === "$text");
  const branches = inBranches(conditions, sort, (path) => scope.indexed.has(path));
  if (!branches) where ??= whereSql(scope, conditions, p).sql;
  const rank = ranked ? rankSql(scope, conditions, p) : undefined;
  const limit = `LIMIT ${p.add(page.limit, "bigint")} OFFSET ${p.add(page.offset, "bigint")}`;
  if (!branches) return `SELECT ${COLUMNS} FROM records WHERE ${where}${after} ORDER BY ${orderSql(sort, pinnedField(scope, conditions, sort), rank, searched)} ${limit}`;
  const end = p.add(page.limit + page.offset, "bigint");
  const parts = branches.map((b) => `(SELECT ${COLUMNS} FROM records WHERE ${whereSql(scope, b, p).sql}${after} ORDER BY ${orderSql(sort, pinnedField(scope, b, sort))} LIMIT ${end})`);
  return `SELECT * FROM (${parts.join(" UNION ALL ")}) u ORDER BY ${orderSql(sort)} ${limit}`;
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
      VALUES (${seq}, ${scope.appId}, ${scope.collection}, ${language}, ${tsvectorLiteral(doc.words)}::tsvector, ${JSON.stringify(doc.fields)}::text::jsonb)
      ON CONFLICT (seq) DO UPDATE SET lang = excluded.lang, tsv = excluded.tsv, fields = excluded.fields`;
  }

  /**
   * The quotas are checked by the INSERT itself (it inserts nothing past a cap): with no
   * unique field to check first, a create is one round trip. Past the byte gate (bytesGate)
   * it is tried again in a transaction that first makes room (makeRoom), which also says
   * which cap refused it. `tx` is undefined outside a transaction.
   */
  async function insertRow(
    tx: PgTx | undefined,
    scope: RecordScope,
    id: string,
    data: Record<string, unknown>,
    now: number,
    unique: readonly string[],
    cap: number | null,
    bytesCap: number | null | undefined,
    feed?: Feed,
  ): Promise<RecordRow> {
    const q = tx ?? sql;
    await assertUnique(q, scope, data, unique, -1);
    const text = JSON.stringify(data);
    const len = bytesCap == null ? 0 : Buffer.byteLength(text);
    const insert = (q: Runner) =>
      cap === null && bytesCap == null
        ? q<{ seq: number }[]>`INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
            VALUES (${id}, ${scope.appId}, ${scope.tenantId}, ${scope.collection}, ${text}, ${now}, ${now}) RETURNING seq`
        : q<{ seq: number }[]>`INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
            SELECT ${id}, ${scope.appId}, ${scope.tenantId}, ${scope.collection}, ${text}, ${now}::bigint, ${now}::bigint
            WHERE ${cap === null ? q`TRUE` : q`(SELECT COALESCE(SUM(records), 0) FROM record_scopes WHERE tenant_id = ${scope.tenantId} AND app_id = ${scope.appId}) < ${cap}`}
              AND ${bytesCap == null ? q`TRUE` : q`EXISTS (${bytesGate(q, scope.tenantId, len, bytesCap)})`}
            RETURNING seq`;
    let [r] = await insert(q);
    if (!r && bytesCap != null) {
      const retry = async (tx: PgTx) => {
        if (cap !== null) {
          const [c] = await tx<{ n: number }[]>`SELECT COALESCE(SUM(records), 0)::bigint AS n FROM record_scopes WHERE tenant_id = ${scope.tenantId} AND app_id = ${scope.appId}`;
          if (c!.n >= cap) throw new QuotaReached(cap);
        }
        if (!(await makeRoom(tx, scope.tenantId, len, bytesCap))) throw new QuotaReached(bytesCap, "bytes");
        const [row] = await insert(tx);
        if (!row) throw new QuotaReached(bytesCap, "bytes");
        return row;
      };
      r = await (tx ? retry(tx) : sql.begin(retry));
    }
    if (!r) throw new QuotaReached(cap!);
    await indexText(q, scope, r.seq, data);
    const row = { seq: r.seq, id, data: text, createdAt: now, updatedAt: now };
    noteChange(feed, scope, "created", id, row, undefined, now);
    return row;
  }

  /**
   * The tenant's byte stripe of this connection (migration 15), locked until the transaction
   * ends, when `grow` more bytes fit in the stripe's share of `bytesCap` (the cap split in
   * BYTE_STRIPES parts, so the shares add up to it) and, as read, in the cap itself. A row
   * when they fit; none when they do not (or the stripe has no row yet): makeRoom then decides.
   */
  const bytesGate = (q: Runner, tenantId: string, grow: number, bytesCap: number) =>
    q`SELECT 1 FROM record_byte_stripes
      WHERE tenant_id = ${tenantId} AND stripe = (pg_backend_pid() % ${BYTE_STRIPES})::smallint
        AND bytes + ${grow}::bigint <= ${bytesCap}::bigint / ${BYTE_STRIPES} + (stripe < ${bytesCap}::bigint % ${BYTE_STRIPES})::int
        AND (SELECT SUM(bytes) FROM record_byte_stripes WHERE tenant_id = ${tenantId}) + ${grow}::bigint <= ${bytesCap}::bigint
      FOR UPDATE`;

  /**
   * The slow way through the byte gate. Locks this connection's stripe, then whichever other
   * stripes of the tenant no one holds (SKIP LOCKED: a transaction holding its own stripe
   * never waits for another, so two of these cannot deadlock), and when `grow` more bytes fit
   * in the cap and in the free bytes of the locked stripes, moves those free bytes so that
   * each locked stripe keeps an even part and this one also `grow`. Every stripe stays within
   * its share, so the shares (adding up to the cap) bound the sum. False, changing nothing,
   * when the bytes do not fit; while other writes of the tenant hold stripes with free bytes,
   * that may refuse a write that would just fit. Only the sum of the stripes means anything:
   * moving bytes between them changes no total.
   */
  async function makeRoom(tx: PgTx, tenantId: string, grow: number, bytesCap: number): Promise<boolean> {
    await tx`INSERT INTO record_byte_stripes (tenant_id, stripe, bytes)
      SELECT ${tenantId}, s, 0 FROM generate_series(0, ${BYTE_STRIPES - 1}) s ON CONFLICT DO NOTHING`;
    const [own] = await tx<{ stripe: number; bytes: number }[]>`SELECT stripe, bytes FROM record_byte_stripes
      WHERE tenant_id = ${tenantId} AND stripe = (pg_backend_pid() % ${BYTE_STRIPES})::smallint FOR UPDATE`;
    const [others, [total]] = await Promise.all([
      tx<{ stripe: number; bytes: number }[]>`SELECT stripe, bytes FROM record_byte_stripes
        WHERE tenant_id = ${tenantId} AND stripe <> ${own!.stripe} ORDER BY stripe FOR UPDATE SKIP LOCKED`,
      tx<{ n: number }[]>`SELECT SUM(bytes)::bigint AS n FROM record_byte_stripes WHERE tenant_id = ${tenantId}`,
    ]);
    if (total!.n + grow > bytesCap) return false;
    const rows = [own!, ...others];
    const share = (stripe: number) => Math.floor(bytesCap / BYTE_STRIPES) + (stripe < bytesCap % BYTE_STRIPES ? 1 : 0);
    const spare = rows.reduce((sum, r) => sum + share(r.stripe) - r.bytes, 0) - grow;
    if (spare < 0) return false;
    const even = Math.floor(spare / rows.length);
    // Each locked stripe keeps `even` bytes free under its share; this one also `grow` and what does not divide.
    const bytes = rows.map((r, i) => share(r.stripe) - even - (i === 0 ? grow + (spare - even * rows.length) : 0));
    await tx`UPDATE record_byte_stripes AS b SET bytes = v.bytes
      FROM (SELECT unnest(${rows.map((r) => r.stripe)}::smallint[]) AS stripe, unnest(${bytes}::bigint[]) AS bytes) v
      WHERE b.tenant_id = ${tenantId} AND b.stripe = v.stripe`;
    return true;
  }

  /** Throws QuotaReached when growing the tenant's record data by `grow` bytes would pass `bytesCap`; else holds its byte stripe's lock. */
  async function assertBytes(tx: PgTx, tenantId: string, grow: number, bytesCap: number | null | undefined) {
    if (bytesCap == null || grow <= 0) return;
    if ((await bytesGate(tx, tenantId, grow, bytesCap)).length > 0) return;
    if (!(await makeRoom(tx, tenantId, grow, bytesCap))) throw new QuotaReached(bytesCap, "bytes");
  }

  async function updateRow(
    tx: PgTx,
    scope: RecordScope,
    row: RecordRow,
    transform: (d: Record<string, unknown>) => Record<string, unknown>,
    now: number,
    unique: readonly string[],
    bytesCap: number | null | undefined,
    feed?: Feed,
  ) {
    const next = transform(JSON.parse(row.data) as Record<string, unknown>);
    await assertUnique(tx, scope, next, unique, row.seq);
    const text = JSON.stringify(next);
    if (bytesCap != null) await assertBytes(tx, scope.tenantId, Buffer.byteLength(text) - Buffer.byteLength(row.data), bytesCap);
    await tx`UPDATE records SET data = ${text}, updated_at = ${now} WHERE seq = ${row.seq}`;
    await indexText(tx, scope, row.seq, next);
    const updated = { ...row, data: text, updatedAt: now };
    noteChange(feed, scope, "updated", row.id, updated, row, now);
    return updated;
  }

  /**
   * Writes `transform` of `row` over it in one autocommitted statement, when the row is still
   * the version that was read (xmin) and, growing under a byte cap, passes the byte gate in
   * the same statement (as a create does). The written row; undefined when another write came
   * first; null when grown data was not written (the byte gate refused, or another write came
   * first): the locking path then makes room in the cap or says it is reached.
   */
  async function writeOver(scope: RecordScope, row: Versioned, transform: (d: Record<string, unknown>) => Record<string, unknown>, now: number, bytesCap: number | null | undefined) {
    const text = JSON.stringify(transform(JSON.parse(row.data) as Record<string, unknown>));
    const grow = bytesCap == null ? 0 : Buffer.byteLength(text) - Buffer.byteLength(row.data);
    const written =
      grow > 0
        ? await sql`UPDATE records SET data = ${text}, updated_at = ${now} WHERE seq = ${row.seq} AND xmin = ${row.version}::xid
            AND EXISTS (${bytesGate(sql, scope.tenantId, grow, bytesCap!)})`
        : await sql`UPDATE records SET data = ${text}, updated_at = ${now} WHERE seq = ${row.seq} AND xmin = ${row.version}::xid`;
    if (written.count === 1) return { seq: row.seq, id: row.id, data: text, createdAt: row.createdAt, updatedAt: now };
    return grow > 0 ? null : undefined;
  }

  /** The records holding an upsert's key value. */
  const keyMatch = (scope: RecordScope, key: { field: string; value: Json }) => whereSql(scope, [{ target: { kind: "field", path: key.field }, op: "$eq", value: key.value }]);

  async function upsertRow(tx: PgTx, feed: Feed | undefined, ...[scope, key, newId, data, transform, now, unique, cap, bytesCap]: Parameters<RecordsRepository["upsert"]>) {
    // The key value's lock first: two upserts of one key take turns, the second updates.
    // The lookup is sent with the lock and runs, with its own snapshot, once it is held.
    const locked = tx`SELECT pg_advisory_xact_lock(hashtextextended(${uniqueKey(scope, key.field, key.value)}, 0))`;
    const w = keyMatch(scope, key);
    const text = `SELECT ${COLUMNS} FROM records WHERE ${w.sql} ORDER BY seq LIMIT 2 FOR UPDATE`;
    const found = tx.unsafe<RecordRow[]>(text, w.params as never[], { prepare: preparedText(text) });
    await locked;
    const [existing, duplicate] = await found;
    // The lookup already answers the unique check of a scalar key (as on SQLite): no record
    // holds the value, or exactly one does. Only the other unique fields need their own query.
    const settled = !duplicate && (key.value === null || typeof key.value !== "object");
    const others = settled ? unique.filter((f) => f !== key.field) : unique;
    if (existing) return { row: await updateRow(tx, scope, existing, transform, now, others, bytesCap, feed), created: false };
    return { row: await insertRow(tx, scope, newId, data, now, others, cap, bytesCap, feed), created: true };
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
  type Insert = Extract<BatchWrite, { kind: "insert" }>;
  /** The creates from `start` on that need nothing but the row itself: no unique value to check, no search words. */
  function plainCreates(writes: BatchWrite[], start: number): Insert[] {
    const run: Insert[] = [];
    for (let i = start; i < writes.length; i++) {
      const w = writes[i]!;
      if (w.kind !== "insert" || w.scope.search !== undefined || w.unique.some((f) => valueAtPath(w.data, f) != null)) break;
      run.push(w);
    }
    return run;
  }

  /**
   * A batch's run of plain creates as one statement: one round trip, one firing of the
   * count triggers, where one statement each cost a batch of 100 as much as 100 single
   * creates. The record quota is checked per row by its place in the run, so the rows
   * written are the run's first ones up to the cap, as one insert after another would
   * leave them; the byte quota is checked once for the run's bytes together. Undefined,
   * with nothing written, when the byte gate does not open at once (or no row fits): the
   * creates then go one by one, which finds the room or the write that passes the cap.
   */
  async function insertRun(tx: PgTx, run: Insert[], now: number, feed: Feed): Promise<RecordRow[] | undefined> {
    const { appId, tenantId } = run[0]!.scope;
    const { cap, bytesCap } = run[0]!;
    const texts = run.map((w) => JSON.stringify(w.data));
    const grow = bytesCap == null ? 0 : texts.reduce((n, t) => n + Buffer.byteLength(t), 0);
    const rows = await tx<{ seq: number; id: string }[]>`INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at)
      SELECT v.id, ${appId}, ${tenantId}, v.collection, v.data, ${now}::bigint, ${now}::bigint
      FROM unnest(${run.map((w) => w.id)}::text[], ${run.map((w) => w.scope.collection)}::text[], ${texts}::text[]) WITH ORDINALITY AS v(id, collection, data, n)
      WHERE ${cap === null ? tx`TRUE` : tx`(SELECT COALESCE(SUM(records), 0) FROM record_scopes WHERE tenant_id = ${tenantId} AND app_id = ${appId}) + v.n <= ${cap}`}
        AND ${bytesCap == null ? tx`TRUE` : tx`EXISTS (${bytesGate(tx, tenantId, grow, bytesCap)})`}
      ORDER BY v.n
      RETURNING seq, id`;
    if (rows.length === 0) return undefined;
    const seqOf = new Map(rows.map((r) => [r.id, r.seq]));
    return run.slice(0, rows.length).map((w, i) => {
      const row = { seq: seqOf.get(w.id)!, id: w.id, data: texts[i]!, createdAt: now, updatedAt: now };
      noteChange(feed, w.scope, "created", w.id, row, undefined, now);
      return row;
    });
  }

  /** One write of a batch, as its single-write method does it, inside the batch's transaction. */
  async function write(tx: PgTx, w: BatchWrite, now: number, feed: Feed): Promise<BatchOutcome> {
    switch (w.kind) {
      case "insert":
        return insertRow(tx, w.scope, w.id, w.data, now, w.unique, w.cap, w.bytesCap, feed);
      case "update": {
        const row = await byId(tx, w.scope, w.id, true);
        return row && updateRow(tx, w.scope, row, w.transform, now, w.unique, w.bytesCap, feed);
      }
      case "upsert":
        return upsertRow(tx, feed, w.scope, w.key, w.newId, w.data, w.transform, now, w.unique, w.cap, w.bytesCap);
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
      const pageSql = pageQuery(scope, conditions, sort, after, page, numbered, w.sql);
      const params = [...numbered.values];
      const p = (v: unknown, cast: string) => `$${params.push(v)}::${cast}`;
      const kept = filterKey === "" ? undefined : totals.get(scopeKey, filterKey);
      const count = `(SELECT COUNT(*) FROM records WHERE ${w.sql})`;
      const total =
        filterKey === "" ? "s.records" : kept ? `CASE WHEN s.version = ${p(kept.version, "bigint")} THEN ${p(kept.total, "bigint")} ELSE ${count} END` : count;
      const text = `WITH s AS (SELECT COALESCE(SUM(writes), 0)::bigint AS version, COALESCE(SUM(records), 0)::bigint AS records FROM record_scopes
                    WHERE tenant_id = ${p(scope.tenantId, "text")} AND app_id = ${p(scope.appId, "text")} AND collection = ${p(scope.collection, "text")})
         SELECT s.version, ${total} AS total, p.seq, p.id, p.data, p.created_at, p.updated_at
         FROM s LEFT JOIN LATERAL (
           SELECT q.*, SUM(char_length(q.data)) OVER (ORDER BY q.n) AS run FROM (
             SELECT r.seq, r.id, r.data, r.created_at, r.updated_at, row_number() OVER () AS n
             FROM (${pageSql}) r
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
    insert: (scope, id, data, now, unique, cap, bytesCap) =>
      scope.feed
        ? fed((tx, feed) => insertRow(tx, scope, id, data, now, unique, cap, bytesCap, feed))
        : scope.search !== undefined || unique.some((f) => valueAtPath(data, f) !== undefined && valueAtPath(data, f) !== null)
          ? sql.begin((tx) => insertRow(tx, scope, id, data, now, unique, cap, bytesCap))
          : insertRow(undefined, scope, id, data, now, [], cap, bytesCap),
    async update(scope, id, transform, now, unique, bytesCap) {
      // Without unique fields, two autocommitted statements instead of BEGIN, a locking read,
      // the write and COMMIT: the write only lands on the row version that was read (xmin),
      // and a concurrent write in between makes it read again. A collection with search on
      // writes the record's words with it, in one transaction.
      // A fed scope takes the locking path: its change is appended in the write's transaction.
      for (let attempt = 0; unique.length === 0 && scope.search === undefined && !scope.feed && attempt < OPTIMISTIC_ATTEMPTS; attempt++) {
        const [row] = await sql<Versioned[]>`SELECT seq, id, data, created_at, updated_at, xmin::text AS version FROM records
          WHERE id = ${id} AND app_id = ${scope.appId} AND tenant_id = ${scope.tenantId} AND collection = ${scope.collection}`;
        if (!row) return undefined;
        const written = await writeOver(scope, row, transform, now, bytesCap);
        if (written) return written;
        if (written === null) break;
      }
      return fed(async (tx, feed) => {
        const row = await byId(tx, scope, id, true);
        return row && updateRow(tx, scope, row, transform, now, unique, bytesCap, feed);
      });
    },
    async upsert(scope, key, newId, data, transform, now, unique, cap, bytesCap) {
      // The common upsert, of a record that exists, by a scalar key that is the collection's
      // only unique field, without a transaction: read it with its version, write over that
      // version. The result keeps the key's value (the data holds it), so no other record can
      // come to share it; an insert of the key takes the key's lock below and finds this record.
      if (unique.length === 1 && scope.search === undefined && !scope.feed && (key.value === null || typeof key.value !== "object")) {
        const w = keyMatch(scope, key);
        const text = `SELECT ${COLUMNS}, xmin::text AS version FROM records WHERE ${w.sql} LIMIT 2`;
        const [existing, duplicate] = await sql.unsafe<Versioned[]>(text, w.params as never[], { prepare: preparedText(text) });
        const written = existing && !duplicate ? await writeOver(scope, existing, transform, now, bytesCap) : undefined;
        if (written) return { row: written, created: false };
      }
      return fed((tx, feed) => upsertRow(tx, feed, scope, key, newId, data, transform, now, unique, cap, bytesCap));
    },
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
        for (let i = 0; i < writes.length; ) {
          const run = plainCreates(writes, i);
          const rows = run.length > 1 ? await insertRun(tx, run, now, feed) : undefined;
          if (rows === undefined) {
            outcomes.push(await batchStep(i, () => write(tx, writes[i]!, now, feed), check));
            i++;
            continue;
          }
          for (const [j, row] of rows.entries()) outcomes.push(batchStep(i + j, () => row, check) as RecordRow);
          if (rows.length < run.length) await batchStep(i + rows.length, () => Promise.reject(new QuotaReached(run[0]!.cap!)), check);
          i += run.length;
        }
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
      const p = new Params();
      const page = pageQuery(scope, conditions, sort, "", { limit: 50, offset: 0, maxBytes: 0, maxRecordBytes: 0 }, p);
      const rows = await run<{ "QUERY PLAN": string; queryPlan?: string }>(sql, `EXPLAIN ${page}`, p.values);
      return rows.map((r) => String(Object.values(r)[0]));
    },
  };
}
