import type { SqliteDb } from "./connection.ts";
import { autoFieldIndex, autoIndexPrefix, INDEX_NAME } from "./record-indexes.ts";
import { BOUND_SCOPE } from "./records-sql.ts";
import { runBuild } from "./auto-index-build.ts";
import { writeGate } from "./write-gate.ts";
import type { AutoIndexInfo } from "../types.ts";

/**
 * When tenantd builds an index for a field nobody declared. A list whose filter or sort uses
 * such a field over a large collection gets the same expression index a declared field
 * gets, built right after the request that asked, so the following requests read only
 * matching rows. The build runs on a worker thread (auto-index-build.ts): the server keeps
 * answering, and its writes wait for the build asynchronously (write-gate.ts).
 */
export const AUTO_INDEX = {
  /** rows of the asking tenant's collection before a field is worth an index (below, a scan takes under a few ms) */
  minRows: 10_000,
  /** automatic indexes per app; past it, fields are refused (declare the ones that matter) */
  maxPerApp: 16,
  /**
   * rows of the app's collection (all tenants) beyond which no index is built automatically:
   * SQLite holds the write lock for the whole build, 2 s per million rows on a quiet
   * 2-core VM, up to 10 s on a busy one, and the server's writes wait that long (write-gate.ts)
   */
  maxBuildRows: 1_000_000,
  /** an automatic index no list used for this long is dropped (it costs every write) */
  idleMs: 7 * 24 * 3600 * 1000,
  /** a field found on too small a collection is looked at again after this */
  recheckMs: 10 * 60 * 1000,
  /** last use is written to the database at most this often per index */
  touchMs: 3600 * 1000,
  /** idle indexes are looked for at most this often */
  sweepMs: 3600 * 1000,
} as const;

export type AutoIndexLimits = { [K in keyof typeof AUTO_INDEX]: number };

interface Row {
  name: string;
  app_id: string;
  collection: string;
  path: string;
  rows: number;
  build_ms: number;
  created_at: number;
  last_used_at: number;
}

interface Entry extends Row {
  /** last_used_at as last written to the table */
  stored: number;
}


const NONE: ReadonlySet<string> = new Set();
/** `@rows` and `@build_ms` are bound by the build (auto-index-build.ts). */
const INSERT_ROW =
  "INSERT OR REPLACE INTO record_auto_indexes (name, app_id, collection, path, rows, build_ms, created_at, last_used_at) " +
  "VALUES (@name, @app_id, @collection, @path, @rows, @build_ms, @created_at, @last_used_at)";
const key = (appId: string, collection: string) => `${appId}\u0000${collection}`;
/** Refused fields remembered per app (the admin list shows them); past it, more are refused without an entry. */
export const MAX_REFUSED_PER_APP = 64;

/** The table `record_auto_indexes` is made by the SQLite migrations (schema/record-auto-indexes.ts). */
export function createAutoIndexes(db: SqliteDb, limits: AutoIndexLimits = AUTO_INDEX) {
  const q = {
    all: db.prepare<[], Row>("SELECT * FROM record_auto_indexes"),
    touch: db.prepare<[number, string]>("UPDATE record_auto_indexes SET last_used_at = ? WHERE name = ?"),
    remove: db.prepare<[string]>("DELETE FROM record_auto_indexes WHERE name = ?"),
    tenantRows: db.prepare<[string, string, string], number>(`SELECT COUNT(*) FROM records WHERE ${BOUND_SCOPE}`).pluck(),
    indexExists: db.prepare<[string], number>("SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?").pluck(),
    indexNames: db.prepare<[number, string], string>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'records' AND substr(name, 1, ?) = ?").pluck(),
  };

  /** app\0collection → path → entry */
  const built = new Map<string, Map<string, Entry>>();
  /** app\0collection → path set, what the SQL compiler reads */
  const paths = new Map<string, Set<string>>();
  const checkedAt = new Map<string, number>();
  const refused = new Map<string, { appId: string; collection: string; path: string; reason: string }>();
  /** Builds asked for, in order; the first is being built (or about to be) while `running` is set. */
  const queue: { appId: string; collection: string; path: string; now: number }[] = [];
  const pending = new Set<string>();
  const gate = writeGate(db);
  let lastSweep = -Infinity;
  let running: Promise<void> | undefined;

  function remember(row: Row) {
    const k = key(row.app_id, row.collection);
    if (!built.has(k)) built.set(k, new Map());
    built.get(k)!.set(row.path, { ...row, stored: row.last_used_at });
    if (!paths.has(k)) paths.set(k, new Set());
    paths.get(k)!.add(row.path);
  }
  function forget(entry: Row) {
    const k = key(entry.app_id, entry.collection);
    built.get(k)?.delete(entry.path);
    paths.get(k)?.delete(entry.path);
  }
  function load() {
    built.clear();
    paths.clear();
    for (const row of q.all.all()) remember(row);
  }
  load();

  /** A refusal, kept for the admin list while the app has fewer than MAX_REFUSED_PER_APP. */
  function rememberRefusal(appId: string, jobKey: string, entry: { appId: string; collection: string; path: string; reason: string }) {
    if (!refused.has(jobKey) && [...refused.values()].filter((r) => r.appId === appId).length >= MAX_REFUSED_PER_APP) return;
    refused.set(jobKey, entry);
  }
  const queuedFor = (appId: string) => queue.filter((j) => j.appId === appId).length;

  const countFor = (appId: string) => [...built.entries()].filter(([k]) => k.startsWith(`${appId}\u0000`)).reduce((n, [, m]) => n + m.size, 0);

  function drop(entry: Row) {
    if (!INDEX_NAME.test(entry.name)) throw new Error(`records: refusing to drop index ${JSON.stringify(entry.name)}`);
    db.transaction(() => {
      db.exec(`DROP INDEX IF EXISTS "${entry.name}"`);
      q.remove.run(entry.name);
    }).immediate();
    forget(entry);
  }

  /** Builds one queued index; resolves when its worker (if any) is gone. */
  async function build(job: { appId: string; collection: string; path: string; now: number }): Promise<void> {
    const jobKey = `${key(job.appId, job.collection)}\u0000${job.path}`;
    if (!db.open || paths.get(key(job.appId, job.collection))?.has(job.path)) return;
    const refuse = (reason: string) => rememberRefusal(job.appId, jobKey, { appId: job.appId, collection: job.collection, path: job.path, reason });
    if (countFor(job.appId) >= limits.maxPerApp) {
      refuse(`the app already has ${limits.maxPerApp} automatic indexes: declare the fields you filter on most (collections.${job.collection}.indexed)`);
      return;
    }
    const index = autoFieldIndex(job.appId, job.collection, job.path);
    const row = { name: index.name, app_id: job.appId, collection: job.collection, path: job.path, created_at: job.now, last_used_at: job.now };
    const release = db.memory ? () => {} : await gate.hold();
    if (!db.open) return release();
    // The row is written with the index, in the build's transaction: a build cut short leaves neither.
    const building = runBuild(db, { appId: job.appId, collection: job.collection, maxRows: limits.maxBuildRows, index: index.sql, record: { sql: INSERT_ROW, params: row } });
    try {
      const outcome = await building.done;
      if (outcome.built) {
        refused.delete(jobKey);
        remember({ ...row, rows: outcome.rows, build_ms: outcome.buildMs });
      } else {
        refuse(
          `the collection holds ${outcome.rows} records, more than ${limits.maxBuildRows}: building would hold writes for seconds, so declare the field (collections.${job.collection}.indexed) at a quiet time`,
        );
      }
    } catch (error) {
      refuse(`building failed: ${(error as Error).message}`);
    } finally {
      // After remember: writes that waited for the build (a declaration of this very field,
      // say) see the index.
      release();
    }
    await building.exited;
  }

  function drain(): Promise<void> {
    // One build at a time, each started after the request that asked has been answered, and
    // after the writes that waited for the previous build have run.
    return (async () => {
      for (let job = queue[0]; job; job = queue[0]) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        await build(job);
        queue.shift();
        pending.delete(`${key(job.appId, job.collection)}\u0000${job.path}`);
      }
      running = undefined;
    })();
  }

  return {
    /** Paths of the collection that have an automatic index. */
    paths(appId: string, collection: string): ReadonlySet<string> {
      return paths.get(key(appId, collection)) ?? NONE;
    },
    /** A list used these automatic indexes: they stay. */
    touch(appId: string, collection: string, used: string[], now: number): void {
      const m = built.get(key(appId, collection));
      if (!m) return;
      for (const path of used) {
        const e = m.get(path);
        if (!e) continue;
        e.last_used_at = Math.max(e.last_used_at, now);
        // During a build the write would wait for it: a later list writes it.
        if (e.last_used_at - e.stored >= limits.touchMs && !gate.held) {
          q.touch.run(e.last_used_at, e.name);
          e.stored = e.last_used_at;
        }
      }
    },
    /**
     * A list filtered or sorted on these fields without an index. Queues a build when the
     * asking tenant's collection is large enough for a scan to matter.
     */
    consider(scope: { appId: string; tenantId: string; collection: string }, fields: string[], now: number): void {
      let tenantRows: number | undefined;
      for (const path of fields) {
        const jobKey = `${key(scope.appId, scope.collection)}\u0000${path}`;
        if (pending.has(jobKey) || refused.has(jobKey)) continue;
        // Per tenant: one tenant's small collection says nothing about another's.
        const checkKey = `${jobKey}\u0000${scope.tenantId}`;
        const at = checkedAt.get(checkKey);
        if (at !== undefined && now - at < limits.recheckMs) continue;
        if (checkedAt.size >= 100_000) checkedAt.clear();
        checkedAt.set(checkKey, now);
        tenantRows ??= q.tenantRows.get(scope.tenantId, scope.appId, scope.collection) ?? 0;
        if (tenantRows < limits.minRows) continue;
        // Builds queued and built together stay within the app's slots: a list naming ever new
        // fields neither grows the queue nor, past MAX_REFUSED_PER_APP, the refusals.
        if (countFor(scope.appId) + queuedFor(scope.appId) >= limits.maxPerApp) {
          rememberRefusal(scope.appId, jobKey, {
            appId: scope.appId,
            collection: scope.collection,
            path,
            reason: `the app already has ${limits.maxPerApp} automatic indexes: declare the fields you filter on most (collections.${scope.collection}.indexed)`,
          });
          continue;
        }
        pending.add(jobKey);
        queue.push({ appId: scope.appId, collection: scope.collection, path, now });
      }
      if (queue.length > 0 && !running) running = drain();
    },
    /** Drops automatic indexes no list used for `idleMs`; looks at most every `sweepMs`. */
    sweep(now: number): void {
      if (now - lastSweep < limits.sweepMs || gate.held) return;
      lastSweep = now;
      for (const m of built.values()) for (const e of [...m.values()]) if (now - e.last_used_at >= limits.idleMs) drop(e);
    },
    /** Drops the automatic indexes of fields that are now declared (the declared index serves them). */
    dropDeclared(appId: string, declared: { collection: string; path: string }[]): void {
      for (const f of declared) {
        const e = built.get(key(appId, f.collection))?.get(f.path);
        if (e) drop(e);
      }
      for (const [k, r] of refused) if (r.appId === appId && declared.some((f) => f.collection === r.collection && f.path === r.path)) refused.delete(k);
    },
    /** Drops every automatic index of the app (the app is being deleted). */
    dropApp(appId: string): void {
      for (const [k, m] of built) if (k.startsWith(`${appId}\u0000`)) for (const e of [...m.values()]) drop(e);
      for (const [k, r] of refused) if (r.appId === appId) refused.delete(k);
    },
    /** Startup repair: rows whose index is gone, indexes without a row, apps that no longer exist. */
    reconcile(liveAppIds: string[]): void {
      const live = new Set(liveAppIds);
      for (const row of q.all.all()) {
        if (!live.has(row.app_id)) drop(row);
        else if (!q.indexExists.get(row.name)) {
          q.remove.run(row.name);
          forget(row);
        }
      }
      const known = new Set(q.all.all().map((r) => r.name));
      for (const name of q.indexNames.all(10, "records_a_")) {
        if (!known.has(name) && INDEX_NAME.test(name)) db.exec(`DROP INDEX IF EXISTS "${name}"`);
      }
    },
    /** What an admin sees: built, queued and refused automatic indexes of the app. */
    list(appId: string): AutoIndexInfo[] {
      const out: AutoIndexInfo[] = [];
      for (const [k, m] of built) {
        if (!k.startsWith(`${appId}\u0000`)) continue;
        for (const e of m.values()) {
          out.push({ collection: e.collection, field: e.path, state: "ready", name: e.name, reason: null, rows: e.rows, buildMs: e.build_ms, createdAt: e.created_at, lastUsedAt: e.last_used_at });
        }
      }
      const blank = { name: null, rows: null, buildMs: null, createdAt: null, lastUsedAt: null };
      for (const job of queue) if (job.appId === appId) out.push({ collection: job.collection, field: job.path, state: "pending", reason: null, ...blank });
      for (const r of refused.values()) if (r.appId === appId) out.push({ collection: r.collection, field: r.path, state: "refused", reason: r.reason, ...blank });
      return out.sort((a, b) => a.collection.localeCompare(b.collection) || a.field.localeCompare(b.field));
    },
    /** Resolves once every queued build has run (closing, tests, the benchmark). */
    settled(): Promise<void> {
      return running ?? Promise.resolve();
    },
    prefix: autoIndexPrefix,
  };
}

export type AutoIndexes = ReturnType<typeof createAutoIndexes>;
