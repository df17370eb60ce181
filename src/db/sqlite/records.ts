import type { Statement } from "better-sqlite3";
import type { SqliteDb } from "./connection.ts";
import { indexableFields, isRanked, type Condition, type Json, type KeyTerm, type SortKey } from "../../data/query.ts";
import { afterSql, chooseDriver, countSql, fromSql, orderSql, TENANT_PARAM, whereSql, type Driver, type Fragment } from "./records-sql.ts";
import type { BatchOutcome, BatchWrite, DataTransform, KeptReply, ListPage, RecordRow, RecordScope, ShareLinkRow, AutoIndexInfo } from "../types.ts";
import type { RecordsRepository } from "../repositories.ts";
import { incrementUsageSql, usageArgs, type UsageArgs } from "./billing.ts";
import { createKeptReplies, createRecordSearch } from "./records-extras.ts";
import { LEGACY_INDEX_NAME } from "./record-indexes.ts";
import { createAutoIndexes } from "./record-auto-indexes.ts";
import { createFieldIndexes, type ReadyIndexes } from "./record-field-index.ts";
import { createTotalsCache } from "./records-totals.ts";
import { batchStep, feedRecord, inBranches, QuotaReached, UniqueConflict, valueAtPath } from "../shared.ts";
import { changeAppender } from "./realtime.ts";
import { recordCounts } from "./record-counts.ts";

export type { RecordScope } from "../types.ts";

/**
 * A record row as better-sqlite3's raw mode reads it: an array in COLUMNS order. A row read
 * as an object has each column name set on it one by one, which for a page of 20 records
 * cost more than stepping the statement (docs/performance.md).
 */
type RawRecord = [seq: number, id: string, data: string, createdAt: number, updatedAt: number];

const toRecord = (r: [...RawRecord, ...unknown[]]): RecordRow => ({ seq: r[0], id: r[1], data: r[2], createdAt: r[3], updatedAt: r[4] });

const COLUMNS = "seq, id, data, created_at, updated_at";

/**
 * A list page's statement. LIMIT is written into the text, not bound: SQLite's planner reads
 * a bound LIMIT's value (it weighs sorting against walking an index in order by how many rows
 * are wanted), and a statement whose plan read a bound value is compiled again every time
 * that parameter is bound, which cost more than the page query itself for a small page. The
 * limit takes at most RECORD_LIMITS.maxLimit values, so the statement cache stays small;
 * OFFSET is not read by the planner and stays bound.
 */
function pageSql(from: string, where: Fragment, order: Fragment, limit: number): string {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new Error(`records: refusing page limit ${limit}`);
  return `SELECT ${COLUMNS} FROM ${from} WHERE ${where.sql} ORDER BY ${order.sql} LIMIT ${limit} OFFSET ?`;
}

/** A list page's statement text and arguments, with where each call puts its tenant and offset. */
interface PageStatement {
  sql: string;
  args: unknown[];
  /** argument positions of the tenant (one per branch; TENANT_PARAM without branches) */
  tenantAt: number[];
  /** argument positions of the offset inside the statement; the last argument is always the offset */
  offsetAt: number[];
}

/**
 * The page query: one statement over the filter, or, for an `$in` on an indexed field
 * (shared.ts inBranches), each value's first `offset + limit` matches, read through that
 * value's index entries in order, merged and sorted.
 */
function pageStatement(scope: RecordScope, ready: ReadonlyMap<string, number>, conditions: Condition[], sort: SortKey[], limit: number, after?: KeyTerm[]): PageStatement {
  const ranked = isRanked(sort);
  const one = (conds: Condition[]) => {
    const driver = chooseDriver(ready, conds, sort);
    const w = whereSql(scope, conds, driver, ranked);
    const a = after ? afterSql(after, driver) : undefined;
    const where = a ? { sql: `${w.sql} AND ${a.sql}`, params: [...w.params, ...a.params] } : w;
    const order = orderSql(conds, sort, driver);
    return { from: fromSql(driver, ranked), where, order };
  };
  const branches = inBranches(conditions, sort, (path) => ready.has(path));
  if (!branches) {
    const { from, where, order } = one(conditions);
    return { sql: pageSql(from, where, order, limit), args: [...where.params, ...order.params], tenantAt: [TENANT_PARAM], offsetAt: [] };
  }
  const args: unknown[] = [];
  const tenantAt: number[] = [];
  const offsetAt: number[] = [];
  const parts = branches.map((b) => {
    const { from, where, order } = one(b);
    tenantAt.push(args.length + TENANT_PARAM);
    args.push(...where.params, ...order.params);
    offsetAt.push(args.length);
    args.push(0);
    return `SELECT * FROM (SELECT ${COLUMNS} FROM ${from} WHERE ${where.sql} ORDER BY ${order.sql} LIMIT ${limit} + ?)`;
  });
  const merged = orderSql([], sort);
  return { sql: pageSql(`(${parts.join(" UNION ALL ")})`, { sql: "1", params: [] }, merged, limit), args: [...args, ...merged.params], tenantAt, offsetAt };
}

const STATEMENT_CACHE_SIZE = 500;

/**
 * A list compiled for everything but its tenant: building the SQL text and finding its
 * statement by that text cost more than the page query of a small page. `args` holds the
 * compiling request's tenant at TENANT_PARAM; each call puts its own there.
 */
interface ListPlan {
  page: Statement;
  args: unknown[];
  tenantAt: number[];
  offsetAt: number[];
  count?: Statement;
  /** what count reads (records-sql.ts countSql) */
  counted: { from: string; where: Fragment };
  /** the totals cache's key: the parsed filter decides the matches, whatever SQL it compiled to */
  filterKey: string;
  /** indexableFields of the filter and sort */
  fields: string[];
  /** the per-field indexes the plan was compiled with */
  ready: ReadyIndexes;
}

/** Compiled lists kept; past it they all go and are compiled again as they come. */
const PLAN_CACHE_SIZE = 500;

const withTenant = (args: unknown[], tenantId: string) => {
  const out = args.slice();
  out[TENANT_PARAM] = tenantId;
  return out;
};

export type RecordsRepo = ReturnType<typeof createRecordsRepo>;

export function createRecordsRepo(db: SqliteDb) {
  const counts = recordCounts(db);
  const totals = createTotalsCache();
  const fieldIndexes = createFieldIndexes(db);
  const autos = createAutoIndexes(db, fieldIndexes);
  const forgetTotals = (scope: RecordScope) => totals.forget(totals.scopeKey(scope.appId, scope.tenantId, scope.collection));

  // Filters make SQL text vary, so those statements are prepared once per text, LRU-bounded.
  const cache = new Map<string, Statement>();
  /** `rows`: the statement reads records (COLUMNS), as arrays; its text is never used otherwise. */
  function stmt(sql: string, rows = false): Statement {
    let s = cache.get(sql);
    if (s) {
      cache.delete(sql);
    } else {
      s = db.prepare(sql);
      if (rows) s.raw(true);
      if (cache.size >= STATEMENT_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    cache.set(sql, s);
    return s;
  }

  const q = {
    byId: db
      .prepare<[string, string, string, string], RawRecord>(`SELECT ${COLUMNS} FROM records WHERE id = ? AND app_id = ? AND tenant_id = ? AND collection = ?`)
      .raw(true),
    insert: db.prepare<[string, string, string, string, string, number, number]>(
      "INSERT INTO records (id, app_id, tenant_id, collection, data, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    update: db.prepare<[string, number, number]>("UPDATE records SET data = ?, updated_at = ? WHERE seq = ?"),
    // SQLite's json_patch is RFC 7396: the same merge as src/tools/merge-patch.ts.
    patch: db
      .prepare<[string, number, string, string, string, string, string, number], RawRecord>(
        `UPDATE records SET data = json_patch(data, ?), updated_at = ? WHERE id = ? AND app_id = ? AND tenant_id = ? AND collection = ? AND octet_length(json_patch(data, ?)) <= ? RETURNING ${COLUMNS}`,
      )
      .raw(true),
    remove: db.prepare<[string, string, string, string]>("DELETE FROM records WHERE id = ? AND app_id = ? AND tenant_id = ? AND collection = ?"),
    shareInsert: db.prepare<[string, string, string, number, number | null]>(
      "INSERT INTO share_links (id, token_hash, record_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?)",
    ),
    shareRevoke: db.prepare<[string]>("DELETE FROM share_links WHERE record_id = ?"),
    sharePurgeExpired: db.prepare<[string, number]>("DELETE FROM share_links WHERE record_id = ? AND expires_at IS NOT NULL AND expires_at <= ?"),
    shareCount: db.prepare<[string], number>("SELECT COUNT(*) FROM share_links WHERE record_id = ?").pluck(),
    shareFind: db
      .prepare<[string], [...RawRecord, expiresAt: number | null]>(
        `SELECT r.seq, r.id, r.data, r.created_at, r.updated_at, s.expires_at FROM share_links s JOIN records r ON r.id = s.record_id WHERE s.token_hash = ?`,
      )
      .raw(true),
    usedBytes: db.prepare<[string], number>("SELECT bytes FROM record_bytes WHERE tenant_id = ?").pluck(),
    legacyIndexes: db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' AND substr(name, 1, 8) = 'records_'").pluck(),
    dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck(),
  };

  const byId = (scope: RecordScope, id: string) => q.byId.get(id, scope.appId, scope.tenantId, scope.collection);

  /** The records of the scope whose `field` equals `value`, through the field's index when it is complete. */
  function matching(scope: RecordScope, field: string, value: Json): { from: string; where: Fragment } {
    const conditions: Condition[] = [{ target: { kind: "field", path: field }, op: "$eq", value }];
    const driver = chooseDriver(fieldIndexes.ready(scope.appId, scope.collection).ix, conditions, []);
    return { from: fromSql(driver), where: whereSql(scope, conditions, driver) };
  }

  function assertUnique(scope: RecordScope, data: Record<string, unknown>, unique: readonly string[], exceptSeq: number) {
    for (const field of unique) {
      const value = valueAtPath(data, field);
      // Like SQL UNIQUE, records without a value (missing or null) never collide.
      if (value === undefined || value === null) continue;
      const m = matching(scope, field, value as Json);
      if (stmt(`SELECT 1 FROM ${m.from} WHERE ${m.where.sql} AND seq != ? LIMIT 1`).get(...m.where.params, exceptSeq)) throw new UniqueConflict(field);
    }
  }

  const search = createRecordSearch(db);
  const kept = createKeptReplies(db);
  const appendChange = changeAppender(db);
  /** A fed scope's change (RecordScope.feed), appended in the write's transaction: every caller below runs in one. */
  function noteChange(scope: RecordScope, kind: "created" | "updated" | "deleted", id: string, after: RecordRow | undefined, before: RecordRow | undefined, now: number) {
    if (!scope.feed) return;
    appendChange({ appId: scope.appId, tenantId: scope.tenantId, kind, collection: scope.collection, recordId: id, data: after ? feedRecord(after) : null, before: before ? feedRecord(before) : null, at: now });
  }
  const removeFed = db.prepare<[string, string, string, string], RawRecord>(`DELETE FROM records WHERE id = ? AND app_id = ? AND tenant_id = ? AND collection = ? RETURNING ${COLUMNS}`).raw(true);
  function removeRow(scope: RecordScope, id: string, now: number): boolean {
    if (!scope.feed) return q.remove.run(id, scope.appId, scope.tenantId, scope.collection).changes > 0;
    const gone = removeFed.get(id, scope.appId, scope.tenantId, scope.collection);
    if (gone) noteChange(scope, "deleted", id, undefined, toRecord(gone), now);
    return gone !== undefined;
  }
  const txRemove = db.transaction(removeRow);

  /** Throws QuotaReached when the tenant already stores `cap` records (null: no cap). */
  function assertRoom(scope: RecordScope, cap: number | null) {
    if (cap !== null && counts.get(scope.appId, scope.tenantId) >= cap) throw new QuotaReached(cap);
  }

  /** The bytes of record data the tenant stores (migration 21's counter, kept by triggers). */
  const usedBytes = (tenantId: string) => q.usedBytes.get(tenantId) ?? 0;

  /**
   * Throws QuotaReached when `grow` more bytes would take the tenant's record data past
   * `bytesCap` (null: no cap). Read and write are one synchronous step on the one connection
   * that writes, so concurrent requests cannot pass the cap together.
   */
  function assertBytes(scope: RecordScope, grow: number, bytesCap: number | null | undefined) {
    if (bytesCap === null || bytesCap === undefined || grow <= 0) return;
    if (usedBytes(scope.tenantId) + grow > bytesCap) throw new QuotaReached(bytesCap, "bytes");
  }

  function insertRow(scope: RecordScope, id: string, data: Record<string, unknown>, now: number, unique: readonly string[], bytesCap?: number | null): RecordRow {
    assertUnique(scope, data, unique, -1);
    const text = JSON.stringify(data);
    if (bytesCap != null) assertBytes(scope, Buffer.byteLength(text), bytesCap);
    const seq = Number(q.insert.run(id, scope.appId, scope.tenantId, scope.collection, text, now, now).lastInsertRowid);
    search.index(scope, seq, data);
    const row = { seq, id, data: text, createdAt: now, updatedAt: now };
    noteChange(scope, "created", id, row, undefined, now);
    return row;
  }

  function updateRow(scope: RecordScope, row: RawRecord, transform: DataTransform, now: number, unique: readonly string[], bytesCap?: number | null): RecordRow {
    const next = transform(JSON.parse(row[2]) as Record<string, unknown>);
    assertUnique(scope, next, unique, row[0]);
    const text = JSON.stringify(next);
    if (bytesCap != null) assertBytes(scope, Buffer.byteLength(text) - Buffer.byteLength(row[2]), bytesCap);
    q.update.run(text, now, row[0]);
    search.index(scope, row[0], next);
    const before = toRecord(row);
    const updated = { ...before, data: text, updatedAt: now };
    noteChange(scope, "updated", before.id, updated, before, now);
    return updated;
  }

  const txInsert = db.transaction(insertRow);
  const txUpdate = db.transaction((scope: RecordScope, id: string, transform: DataTransform, now: number, unique: readonly string[], bytesCap?: number | null) => {
    const row = byId(scope, id);
    return row && updateRow(scope, row, transform, now, unique, bytesCap);
  });
  function upsertRow(...[scope, key, newId, data, transform, now, unique, cap, bytesCap]: Parameters<RecordsRepository["upsert"]>) {
    const m = matching(scope, key.field, key.value);
    // Unordered: with two matches the update below is a 409 whichever one comes first (the
    // unique check of the key finds the other), and an ORDER BY would sort on every upsert.
    const [existing, duplicate] = stmt(`SELECT ${COLUMNS} FROM ${m.from} WHERE ${m.where.sql} LIMIT 2`, true).all(...m.where.params) as RawRecord[];
    // The lookup already answers the unique check of a scalar key: no record holds the value,
    // or exactly one does (a second one, left from before the field was unique, is still a
    // conflict). Only the other unique fields need their own query.
    const settled = !duplicate && (key.value === null || typeof key.value !== "object");
    const others = settled ? unique.filter((f) => f !== key.field) : unique;
    if (existing) return { row: updateRow(scope, existing, transform, now, others, bytesCap), created: false };
    assertRoom(scope, cap);
    return { row: insertRow(scope, newId, data, now, others, bytesCap), created: true };
  }
  const txUpsert = db.transaction(upsertRow);

  const usage = {
    any: db.prepare<UsageArgs, number>(incrementUsageSql("")).pluck(),
    within: db.prepare<[...UsageArgs, number], number>(incrementUsageSql(" AND billing_usage.count + excluded.count <= ?")).pluck(),
  };

  function write(w: BatchWrite, now: number): BatchOutcome {
    switch (w.kind) {
      case "insert":
        assertRoom(w.scope, w.cap);
        return insertRow(w.scope, w.id, w.data, now, w.unique, w.bytesCap);
      case "update": {
        const row = byId(w.scope, w.id);
        return row && updateRow(w.scope, row, w.transform, now, w.unique, w.bytesCap);
      }
      case "upsert":
        return upsertRow(w.scope, w.key, w.newId, w.data, w.transform, now, w.unique, w.cap, w.bytesCap);
      case "remove":
        return removeRow(w.scope, w.id, now);
      case "usage": {
        const u = w.usage;
        if (u.limit === null) return usage.any.get(...usageArgs(u));
        return u.by > u.limit ? undefined : usage.within.get(...usageArgs(u), u.limit);
      }
    }
  }

  const txBatch = db.transaction(
    (writes: BatchWrite[], now: number, check: (index: number, outcome: BatchOutcome) => void, claim?: Parameters<RecordsRepository["batch"]>[3]): BatchOutcome[] | "taken" => {
      if (claim && !kept.claim(claim.key, now)) return "taken";
      const outcomes = writes.map((w, i) => batchStep(i, () => write(w, now), check) as BatchOutcome);
      if (claim) {
        const { status, body } = claim.reply(outcomes);
        kept.keep(claim.key, status, body);
      }
      return outcomes;
    },
  );
  /** Forgets a tenant's record count (record-counts.ts) after a batch that inserted was rolled back: its trigger counted the inserts. */
  let forgetCount: Statement | undefined;
  // By the parsed filter and sort, which data/query.ts parseList hands out as the same objects
  // for the same texts, then by the rest of what the SQL depends on.
  let plans = new WeakMap<Condition[], WeakMap<SortKey[], Map<string, ListPlan>>>();
  let planCount = 0;

  function compile(scope: RecordScope, ready: ReadyIndexes, conditions: Condition[], sort: SortKey[], limit: number): ListPlan {
    const driver = chooseDriver(ready.ix, conditions, sort);
    const page = pageStatement(scope, ready.ix, conditions, sort, limit);
    return {
      page: stmt(page.sql, true),
      args: page.args,
      tenantAt: page.tenantAt,
      offsetAt: page.offsetAt,
      filterKey: JSON.stringify(conditions),
      fields: indexableFields(conditions, sort),
      ready,
      counted: countSql(scope, conditions, driver),
    };
  }

  function planFor(scope: RecordScope, conditions: Condition[], sort: SortKey[], limit: number): ListPlan {
    const ready = fieldIndexes.ready(scope.appId, scope.collection);
    // The tenant is left out: the scope's other parts and its complete indexes shape the SQL,
    // and the search language too: a $text's words are bound from it.
    const key = `${scope.appId}\u0000${scope.collection}\u0000${limit}\u0000${scope.search ?? ""}\u0000${ready.key}`;
    const known = plans.get(conditions)?.get(sort)?.get(key);
    if (known) return known;
    if (planCount >= PLAN_CACHE_SIZE) {
      plans = new WeakMap();
      planCount = 0;
    }
    let bySort = plans.get(conditions);
    if (!bySort) plans.set(conditions, (bySort = new WeakMap()));
    let byScope = bySort.get(sort);
    if (!byScope) bySort.set(sort, (byScope = new Map()));
    const plan = compile(scope, ready, conditions, sort, limit);
    byScope.set(key, plan);
    planCount++;
    return plan;
  }

  /** One page of records; `cut` when it ended at the byte budget. */
  function readPage(plan: ListPlan, tenantId: string, page: ListPage): { records: RecordRow[]; cut: boolean } {
    const records: RecordRow[] = [];
    let bytes = 0;
    let cut = false;
    const args = plan.args.slice();
    for (const i of plan.tenantAt) args[i] = tenantId;
    for (const i of plan.offsetAt) args[i] = page.offset;
    args.push(page.offset);
    // A page that cannot pass the budget is read in one call (cheaper than stepping an iterator).
    const rows = page.limit * page.maxRecordBytes <= page.maxBytes ? plan.page.all(...args) : plan.page.iterate(...args);
    for (const row of rows as Iterable<RawRecord>) {
      // Rows are read one at a time, so a page of large records stops at the byte budget
      // instead of holding `limit` of them in memory at once.
      bytes += row[2].length;
      if (records.length > 0 && bytes > page.maxBytes) {
        cut = true;
        break;
      }
      records.push(toRecord(row));
    }
    return { records, cut };
  }

  /** The statement counting a plan's matches, prepared on first use. */
  const countOf = (plan: ListPlan) => (plan.count ??= db.prepare(`SELECT COUNT(*) FROM ${plan.counted.from} WHERE ${plan.counted.where.sql}`).pluck());

  /**
   * The plan of a cursor page: the filter's plan (its count, its totals key) with a page
   * statement that also starts past the cursor. Not kept: its values change every page, its
   * statement text only with the kinds of those values (kept in the statement cache).
   */
  function afterPlan(scope: RecordScope, conditions: Condition[], sort: SortKey[], page: ListPage & { after: KeyTerm[] }): ListPlan {
    const base = planFor(scope, conditions, sort, page.limit);
    countOf(base);
    const s = pageStatement(scope, base.ready.ix, conditions, sort, page.limit, page.after);
    return { ...base, page: stmt(s.sql, true), args: s.args, tenantAt: s.tenantAt, offsetAt: s.offsetAt };
  }

  /** A page that ran out of matches before its limit already counted them (not a cursor page: records before it were not read). */
  const exhausted = (read: { records: RecordRow[]; cut: boolean }, page: ListPage) =>
    page.after === undefined && !read.cut && read.records.length < page.limit && (read.records.length > 0 || page.offset === 0);

  /**
   * The list without a transaction, in its common cases: a page that ends the matches (one
   * statement, no BEGIN, data_version or COMMIT), or a total remembered from before. That
   * total holds for the page when data_version, read after the page, is still the one it was
   * counted under: data_version only grows, so the page's snapshot, between the two, saw no
   * other connection's commit either (this connection cannot write in between: the calls
   * are synchronous). Otherwise undefined, and the list is read in one transaction.
   */
  function listUnlocked(scope: RecordScope, plan: ListPlan, page: ListPage) {
    const read = readPage(plan, scope.tenantId, page);
    if (exhausted(read, page)) return { records: read.records, total: page.offset + read.records.length };
    const total = totals.get(totals.scopeKey(scope.appId, scope.tenantId, scope.collection), plan.filterKey, q.dataVersion.get()!);
    return total === undefined ? undefined : { records: read.records, total };
  }

  const txList = db.transaction((scope: RecordScope, plan: ListPlan, page: ListPage) => {
    const read = readPage(plan, scope.tenantId, page);
    const scopeKey = totals.scopeKey(scope.appId, scope.tenantId, scope.collection);
    const version = q.dataVersion.get()!;
    let total = totals.get(scopeKey, plan.filterKey, version);
    if (total === undefined) {
      total = exhausted(read, page) ? page.offset + read.records.length : (countOf(plan).get(...withTenant(plan.counted.where.params, scope.tenantId)) as number);
      totals.set(scopeKey, plan.filterKey, total, version);
    }
    return { records: read.records, total };
  });
  const txShare = db.transaction((scope: RecordScope, recordId: string, link: ShareLinkRow, tokenHash: string, maxLinks: number): boolean | "full" => {
    if (!byId(scope, recordId)) return false;
    q.sharePurgeExpired.run(recordId, link.createdAt);
    if (q.shareCount.get(recordId)! >= maxLinks) return "full";
    q.shareInsert.run(link.id, tokenHash, recordId, link.createdAt, link.expiresAt);
    return true;
  });
  const txRevoke = db.transaction((scope: RecordScope, recordId: string) => (byId(scope, recordId) ? q.shareRevoke.run(recordId).changes : undefined));


  return {
    get(scope: RecordScope, id: string): RecordRow | undefined {
      const row = byId(scope, id);
      return row && toRecord(row);
    },
    /**
     * The page and its total, as of one snapshot (see listUnlocked). The page ends early once
     * its records' data passes `maxBytes` (it always holds at least one record).
     */
    /**
     * `total` is remembered per scope and filter until a write to the scope (or another
     * process's commit), so paging a large result counts its matches once. Fields without an
     * index are reported to the automatic indexes, which may build one after this request.
     */
    list(scope: RecordScope, conditions: Condition[], sort: SortKey[], page: ListPage, now: number): { records: RecordRow[]; total: number } {
      fieldIndexes.refresh();
      const plan = page.after ? afterPlan(scope, conditions, sort, { ...page, after: page.after }) : planFor(scope, conditions, sort, page.limit);
      const result = listUnlocked(scope, plan, page) ?? txList(scope, plan, page);
      const fields = plan.fields;
      if (fields.length > 0) {
        const ready = plan.ready.ix;
        autos.touch(scope.appId, scope.collection, fields.filter((f) => ready.has(f)), now);
        const missing = fields.filter((f) => !ready.has(f));
        if (missing.length > 0) autos.consider(scope, missing, now);
      }
      autos.sweep(now);
      return result;
    },
    /** Inserts after checking the quota and unique fields, in the same synchronous step (throws QuotaReached, UniqueConflict). */
    async insert(scope: RecordScope, id: string, data: Record<string, unknown>, now: number, unique: readonly string[], cap: number | null, bytesCap?: number | null): Promise<RecordRow> {
      assertRoom(scope, cap);
      forgetTotals(scope);
      // With no unique field to check first and no words to index, the INSERT is the whole write: one statement needs no transaction.
      return unique.length === 0 && scope.search === undefined && !scope.feed ? insertRow(scope, id, data, now, unique, bytesCap) : txInsert.immediate(scope, id, data, now, unique, bytesCap);
    },
    /** Reads, transforms and writes back in one transaction; undefined when the record is not in scope. */
    async update(scope: RecordScope, id: string, transform: DataTransform, now: number, unique: readonly string[], bytesCap?: number | null): Promise<RecordRow | undefined> {
      forgetTotals(scope);
      return txUpdate.immediate(scope, id, transform, now, unique, bytesCap);
    },
    /**
     * One statement where update() takes a transaction of four: no read, parse or serialize in
     * JS. Near the byte cap (within one record's largest size) it leaves the write to update(),
     * which weighs the result against the cap.
     */
    async patch(scope: RecordScope, id: string, patch: string, now: number, maxBytes: number, bytesCap?: number | null): Promise<RecordRow | undefined> {
      if (bytesCap != null && usedBytes(scope.tenantId) + maxBytes > bytesCap) return undefined;
      forgetTotals(scope);
      const row = q.patch.get(patch, now, id, scope.appId, scope.tenantId, scope.collection, patch, maxBytes);
      return row && toRecord(row);
    },
    /** Finds the record whose `key.field` equals `key.value` and transforms it, or inserts `data`. */
    async upsert(...args: Parameters<RecordsRepository["upsert"]>): Promise<{ row: RecordRow; created: boolean }> {
      forgetTotals(args[0]);
      fieldIndexes.refresh();
      return txUpsert.immediate(...args);
    },
    async remove(scope: RecordScope, id: string, now = Date.now()): Promise<boolean> {
      forgetTotals(scope);
      return scope.feed ? txRemove.immediate(scope, id, now) : q.remove.run(id, scope.appId, scope.tenantId, scope.collection).changes > 0;
    },
    /** All of `writes` in one IMMEDIATE transaction, or none (see RecordsRepository.batch). */
    async batch(...[writes, now, check, claim]: Parameters<RecordsRepository["batch"]>): Promise<BatchOutcome[] | "taken"> {
      for (const w of writes) if (w.kind !== "usage") forgetTotals(w.scope);
      fieldIndexes.refresh();
      try {
        return txBatch.immediate(writes, now, check, claim);
      } catch (e) {
        for (const w of writes) {
          if (w.kind === "insert" || w.kind === "upsert") {
            forgetCount ??= db.prepare("SELECT tenantd_record_removed(?, ?)");
            forgetCount.get(w.scope.appId, w.scope.tenantId);
          }
        }
        throw e;
      }
    },
    syncSearch: search.sync,
    async keptReply(appId: string, tenantId: string, keyHash: string, notBefore: number): Promise<KeptReply | undefined> {
      return kept.get(appId, tenantId, keyHash, notBefore);
    },
    async purgeKeptReplies(before: number): Promise<number> {
      return kept.purge(before);
    },
    async createShareLink(scope: RecordScope, recordId: string, link: ShareLinkRow, tokenHash: string, maxLinks: number): Promise<boolean | "full"> {
      return txShare.immediate(scope, recordId, link, tokenHash, maxLinks);
    },
    /** Deletes every share link of the record; undefined when the record is not in scope. */
    async revokeShareLinks(scope: RecordScope, recordId: string): Promise<number | undefined> {
      return txRevoke.immediate(scope, recordId);
    },
    async findShared(tokenHash: string): Promise<{ record: RecordRow; expiresAt: number | null } | undefined> {
      const r = q.shareFind.get(tokenHash);
      return r && { record: toRecord(r), expiresAt: r[5] };
    },
    /**
     * Makes the app's declared indexes exactly `fields`. Returns at once: a missing index is
     * built in chunks (record-field-index.ts) and serves lists once complete; an automatic
     * index of a field now declared becomes the declared one as it is; a field no longer
     * declared loses its index (dropped in chunks too).
     */
    async syncIndexes(appId: string, fields: { collection: string; path: string }[], now = Date.now()): Promise<void> {
      fieldIndexes.refresh();
      const wanted = new Set(fields.map((f) => `${f.collection}\u0000${f.path}`));
      for (const row of [...fieldIndexes.rows()]) {
        if (row.app_id === appId && row.declared && !wanted.has(`${row.collection}\u0000${row.path}`)) fieldIndexes.undeclare(row, false);
      }
      for (const f of fields) fieldIndexes.add(appId, f.collection, f.path, true, now);
      autos.declared(appId, fields);
    },
    /** Drops the app's indexes (the app is being deleted). */
    async dropAutoIndexes(appId: string): Promise<void> {
      autos.dropApp(appId);
    },
    /**
     * Startup: drops the indexes of apps that no longer exist and the expression indexes of
     * tenantd before schema 17, and carries on with builds and drops a stop cut short.
     */
    async dropIndexesExcept(appIds: string[]): Promise<void> {
      const live = new Set(appIds);
      for (const row of [...fieldIndexes.rows()]) if (!live.has(row.app_id)) fieldIndexes.drop(row);
      for (const name of q.legacyIndexes.all()) if (LEGACY_INDEX_NAME.test(name)) db.exec(`DROP INDEX IF EXISTS "${name}"`);
      fieldIndexes.resume();
    },
    /** The app's automatic indexes: built, queued, refused (admin API). */
    async autoIndexes(appId: string): Promise<AutoIndexInfo[]> {
      return autos.list(appId);
    },
    /** Closing: builds and drops stop after their current chunk and go on at the next start. */
    async stopIndexBuilds(): Promise<void> {
      await fieldIndexes.stop();
    },
    /** Resolves once index builds and drops (declared and automatic, this process's or left by another) have run. */
    async autoIndexesSettled(): Promise<void> {
      fieldIndexes.refresh();
      await fieldIndexes.settled();
    },
    /** EXPLAIN QUERY PLAN of the page query (tests and benchmarks check index use). */
    async explainList(scope: RecordScope, conditions: Condition[], sort: SortKey[]): Promise<string[]> {
      fieldIndexes.refresh();
      const page = pageStatement(scope, fieldIndexes.ready(scope.appId, scope.collection).ix, conditions, sort, 50);
      return (db.prepare(`EXPLAIN QUERY PLAN ${page.sql}`).all(...page.args, 0) as { detail: string }[]).map((r) => r.detail);
    },
  };
}
