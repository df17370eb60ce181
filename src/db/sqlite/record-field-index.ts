import type { SqliteDb } from "./connection.ts";
import { jsonPath, rankSql, valueSql } from "./records-sql.ts";

/**
 * Per-field record indexes kept in `record_field_entries` (schema/record-field-indexes.ts):
 * one entry per record of the app's collection with the field's type rank and value, in an
 * ordinary index that lists read through (records-sql.ts).
 *
 * A build copies the collection's rows in chunks, each a short IMMEDIATE transaction over a
 * bounded range of `seq` (any app's rows in that range are skipped by their columns, their
 * data never parsed), and yields to the event loop between chunks: another app's write waits
 * at most one chunk, a few milliseconds, whatever the table's size (issue 39). Rows written
 * meanwhile reach the entries through the triggers, which exist before the first chunk.
 * Lists use an index only once it is complete.
 */
export const BUILD = {
  /** a chunk's time beyond which the next chunk spans half the range */
  slowMs: 6,
  /** under this, the next chunk spans twice the range */
  fastMs: 2,
  minRows: 64,
  maxRows: 16_384,
  /** a dropped index's entries deleted per chunk */
  dropRows: 4096,
} as const;

export interface FieldIndexRow {
  ix: number;
  app_id: string;
  collection: string;
  path: string;
  json_path: string;
  declared: number;
  build_to: number | null;
  build_from: number;
  rows: number;
  build_ms: number;
  created_at: number;
  last_used_at: number;
}

/** The complete indexes of one app's collection: path → ix, and a key naming exactly that set. */
export interface ReadyIndexes {
  readonly ix: ReadonlyMap<string, number>;
  readonly key: string;
}

const NONE: ReadyIndexes = { ix: new Map(), key: "" };
const key = (appId: string, collection: string) => `${appId}\u0000${collection}`;
const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

export function createFieldIndexes(db: SqliteDb) {
  const P = "@jp";
  const q = {
    all: db.prepare<[], FieldIndexRow>("SELECT * FROM record_field_indexes"),
    one: db.prepare<[number], FieldIndexRow>("SELECT * FROM record_field_indexes WHERE ix = ?"),
    maxSeq: db.prepare<[], number>("SELECT COALESCE(MAX(seq), 0) FROM records").pluck(),
    insert: db.prepare(
      "INSERT INTO record_field_indexes (app_id, collection, path, json_path, declared, build_to, created_at, last_used_at) " +
        "VALUES (@app_id, @collection, @path, @json_path, @declared, @build_to, @now, @now) RETURNING *",
    ),
    declare: db.prepare<[number, number]>("UPDATE record_field_indexes SET declared = ? WHERE ix = ?"),
    touch: db.prepare<[number, number]>("UPDATE record_field_indexes SET last_used_at = ? WHERE ix = ?"),
    remove: db.prepare<[number]>("DELETE FROM record_field_indexes WHERE ix = ?"),
    dropLater: db.prepare<[number]>("INSERT OR IGNORE INTO record_field_drops (ix) VALUES (?)"),
    nextDrop: db.prepare<[], number>("SELECT ix FROM record_field_drops LIMIT 1").pluck(),
    dropChunk: db.prepare<[number, number, number]>("DELETE FROM record_field_entries WHERE ix = ? AND rec_seq IN (SELECT rec_seq FROM record_field_entries WHERE ix = ? LIMIT ?)"),
    dropDone: db.prepare<[number]>("DELETE FROM record_field_drops WHERE ix = ?"),
    copy: db.prepare(
      `INSERT OR REPLACE INTO record_field_entries (ix, rec_seq, rec_tenant, rank, value, rec_created)
       SELECT @ix, seq, tenant_id, ${rankSql(P)}, ${valueSql(P)}, created_at FROM records
       WHERE seq > @from AND seq <= @to AND app_id = @app AND collection = @collection`,
    ),
    progress: db.prepare("UPDATE record_field_indexes SET build_from = @to, rows = rows + @rows, build_ms = build_ms + @ms, build_to = @build_to WHERE ix = @ix"),
    /** the seq `n` rows on from `from`: a chunk spans that many rows, however sparse seq is */
    nthSeq: db.prepare<[number, number], number>("SELECT seq FROM records WHERE seq > ? ORDER BY seq LIMIT 1 OFFSET ?").pluck(),
    /** the distinct ix of the entries, one step of the primary key each */
    nextIx: db.prepare<[number], number | null>("SELECT MIN(ix) FROM record_field_entries WHERE ix > ?").pluck(),
    dataVersion: db.prepare<[], number>("PRAGMA data_version").pluck(),
  };

  const rows = new Map<number, FieldIndexRow>();
  /** app\0collection → its complete indexes, one object until the set changes (plans key on it) */
  const ready = new Map<string, ReadyIndexes>();
  let version = -1;
  let running: Promise<void> | undefined;
  let stopped = false;
  let chunk = 1024;
  const listeners: ((row: FieldIndexRow) => void)[] = [];

  function rebuildReady(k: string) {
    const ix = new Map<string, number>();
    for (const r of rows.values()) if (r.build_to === null && key(r.app_id, r.collection) === k) ix.set(r.path, r.ix);
    if (ix.size === 0) ready.delete(k);
    else ready.set(k, { ix, key: [...ix].map(([p, n]) => `${p}=${n}`).join("\u0000") });
  }
  function load() {
    rows.clear();
    for (const r of q.all.all()) rows.set(r.ix, r);
    ready.clear();
    for (const k of new Set([...rows.values()].map((r) => key(r.app_id, r.collection)))) rebuildReady(k);
    version = q.dataVersion.get()!;
  }
  load();

  /**
   * Another process (the CLI) may have added, finished or dropped an index: read the table
   * again when one has committed since. A dropped index must never be read from here.
   */
  function refresh(): void {
    if (q.dataVersion.get() === version) return;
    load();
    kick();
  }

  /** One step of the work queue: a chunk of a drop, or of a build. False when there is nothing left. */
  function step(): boolean {
    const drop = q.nextDrop.get();
    if (drop !== undefined) {
      db.transaction(() => {
        if (q.dropChunk.run(drop, drop, BUILD.dropRows).changes < BUILD.dropRows) q.dropDone.run(drop);
      }).immediate();
      return true;
    }
    const building = [...rows.values()].find((r) => r.build_to !== null);
    if (!building) return false;
    const started = performance.now();
    const done = db
      .transaction(() => {
        // Read here, in the write transaction: another process may have moved it on, or dropped it.
        const row = q.one.get(building.ix);
        if (!row || row.build_to === null) return row;
        const to = Math.min(q.nthSeq.get(row.build_from, chunk - 1) ?? row.build_to, row.build_to);
        const copied = q.copy.run({ ix: row.ix, jp: row.json_path, from: row.build_from, to, app: row.app_id, collection: row.collection }).changes;
        const ms = Math.round(performance.now() - started);
        q.progress.run({ ix: row.ix, to, rows: copied, ms, build_to: to >= row.build_to ? null : row.build_to });
        return q.one.get(row.ix);
      })
      .immediate();
    const ms = performance.now() - started;
    if (ms > BUILD.slowMs) chunk = Math.max(BUILD.minRows, chunk >> 1);
    else if (ms < BUILD.fastMs) chunk = Math.min(BUILD.maxRows, chunk << 1);
    if (!done) rows.delete(building.ix);
    else rows.set(done.ix, done);
    if (!done || done.build_to === null) {
      rebuildReady(key(building.app_id, building.collection));
      if (done) for (const l of listeners) l(done);
    }
    return true;
  }

  function kick(): void {
    if (running || stopped || !db.open) return;
    running = (async () => {
      try {
        // The request that asked is answered first; each chunk then waits for the writes and
        // reads that queued behind the previous one.
        await tick();
        while (db.open && !stopped && step()) await tick();
      } finally {
        running = undefined;
      }
    })();
  }

  // Builds and drops a stop cut short go on (resume() also finds entries nothing owns).
  kick();

  function drop(row: FieldIndexRow): void {
    db.transaction(() => {
      q.remove.run(row.ix);
      q.dropLater.run(row.ix);
    }).immediate();
    rows.delete(row.ix);
    rebuildReady(key(row.app_id, row.collection));
    kick();
  }

  return {
    refresh,
    /** The complete indexes of the collection (refresh() first when another process may write). */
    ready(appId: string, collection: string): ReadyIndexes {
      return ready.get(key(appId, collection)) ?? NONE;
    },
    rows(): IterableIterator<FieldIndexRow> {
      return rows.values();
    },
    find(appId: string, collection: string, path: string): FieldIndexRow | undefined {
      for (const r of rows.values()) if (r.app_id === appId && r.collection === collection && r.path === path) return r;
      return undefined;
    },
    /** Starts building an index (or marks an existing one declared). Returns at once; the build runs in chunks. */
    add(appId: string, collection: string, path: string, declared: boolean, now: number): FieldIndexRow {
      const known = this.find(appId, collection, path);
      if (known) {
        if (declared && !known.declared) {
          q.declare.run(1, known.ix);
          known.declared = 1;
        }
        return known;
      }
      // The triggers cover every row written from this transaction on; the build copies the rest.
      const row = db
        .transaction(() => {
          const to = q.maxSeq.get()!;
          return q.insert.get({ app_id: appId, collection, path, json_path: jsonPath(path), declared: declared ? 1 : 0, build_to: to, now }) as FieldIndexRow;
        })
        .immediate();
      rows.set(row.ix, row);
      kick();
      return row;
    },
    /** A declared field no longer declared becomes an automatic index, or goes (`keep` false). */
    undeclare(row: FieldIndexRow, keep: boolean): void {
      if (!keep) return drop(row);
      q.declare.run(0, row.ix);
      row.declared = 0;
    },
    drop,
    touch(row: FieldIndexRow, at: number): void {
      q.touch.run(at, row.ix);
      row.last_used_at = at;
    },
    /** Called with each index the moment it is complete. */
    onReady(listener: (row: FieldIndexRow) => void): void {
      listeners.push(listener);
    },
    /** Startup: builds and drops left unfinished go on; entries of indexes lost track of are dropped. */
    resume(): void {
      for (let ix = q.nextIx.get(0); typeof ix === "number"; ix = q.nextIx.get(ix)) if (!rows.has(ix)) q.dropLater.run(ix);
      kick();
    },
    /** Resolves once no build or drop is left (tests, the benchmark). */
    async settled(): Promise<void> {
      while (running) await running;
    },
    /** Closing: no chunk after the current one. What is left goes on at the next start (resume). */
    async stop(): Promise<void> {
      stopped = true;
      await running;
    },
  };
}

export type FieldIndexes = ReturnType<typeof createFieldIndexes>;
