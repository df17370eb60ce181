import type { PgSql } from "./connection.ts";
import type { AutoIndexInfo } from "../types.ts";
import { AUTO_INDEX, type AutoIndexLimits } from "../sqlite/record-auto-indexes.ts";
import { pgAutoIndex, PG_AUTO_INDEX_NAME } from "./record-indexes.ts";
import type { IndexDdl } from "./index-ddl.ts";
import { createAutoIndexRule } from "../../data/auto-index-rule.ts";

/** A claim older than this is taken over: the node building it is presumed gone. */
const STALE_CLAIM_MS = 3600 * 1000;
/** Without the change feed, the list of built indexes is read again at most this often. */
const RELOAD_MS = 5_000;
/** Refused fields listed per app (for the admin list); past it, more are refused without a row. */
const MAX_REFUSED_PER_APP = 64;
/** Tenants and fields remembered as recently looked at, and fields refused, per node. */
const MAX_REMEMBERED = 10_000;

interface Row {
  name: string;
  appId: string;
  collection: string;
  path: string;
  state: "building" | "ready" | "refused";
  reason: string | null;
  rows: number | null;
  buildMs: number | null;
  createdAt: number;
  lastUsedAt: number;
}

const key = (appId: string, collection: string) => `${appId}\u0000${collection}`;

/**
 * Automatic indexes on PostgreSQL: the SQLite store's rules (src/db/sqlite/record-auto-indexes.ts:
 * a field of a list over a large enough tenant collection, at most `maxPerApp` per app, idle
 * ones dropped) with PostgreSQL's way of building: `CREATE INDEX CONCURRENTLY`, so no write
 * of any app waits for a build, and no row limit on the collection.
 *
 * Shared by every node through `record_auto_indexes` (migration 5): one node claims a build
 * (an insert only one can make), builds, and marks it ready; every node's lists use it once
 * they have read it back (announced on the change feed, or within RELOAD_MS without it).
 */
export function createPgAutoIndexes(sql: PgSql, ddl: IndexDdl, limits: AutoIndexLimits = AUTO_INDEX) {
  let paths = new Map<string, Set<string>>();
  let loadedAt = -Infinity;
  let loading: Promise<void> | undefined;
  const checkedAt = new Map<string, number>();
  const running = new Set<Promise<void>>();
  const touched = new Map<string, number>();
  let lastSweep = -Infinity;
  const rule = createAutoIndexRule(limits);

  async function reload() {
    const rows = await sql<Pick<Row, "appId" | "collection" | "path">[]>`SELECT app_id, collection, path FROM record_auto_indexes WHERE state = 'ready'`;
    const next = new Map<string, Set<string>>();
    for (const r of rows) {
      const k = key(r.appId, r.collection);
      if (!next.has(k)) next.set(k, new Set());
      next.get(k)!.add(r.path);
    }
    paths = next;
  }
  function refresh(now: number) {
    if (loading || now - loadedAt < RELOAD_MS) return;
    loadedAt = now;
    loading = reload()
      .catch(() => undefined)
      .finally(() => (loading = undefined));
  }

  function remember<K, V>(map: Map<K, V>, k: K, v: V) {
    if (map.size >= MAX_REMEMBERED) map.delete(map.keys().next().value!);
    map.set(k, v);
  }

  async function build(appId: string, collection: string, path: string, now: number): Promise<void> {
    const index = pgAutoIndex(appId, collection, path);
    // One node claims: an insert under the app's cap, or a takeover of a claim whose node died.
    const claimed = await sql`
      INSERT INTO record_auto_indexes AS a (name, app_id, collection, path, state, created_at, last_used_at)
      SELECT ${index.name}, ${appId}, ${collection}, ${path}, 'building', ${now}, ${now}
      WHERE (SELECT COUNT(*) FROM record_auto_indexes WHERE app_id = ${appId} AND state <> 'refused') < ${limits.maxPerApp}
      ON CONFLICT (name) DO UPDATE SET created_at = excluded.created_at, state = 'building', reason = NULL
        WHERE a.state = 'building' AND a.created_at < ${now - STALE_CLAIM_MS}
      RETURNING name`;
    if (claimed.length === 0) {
      // Refused for the cap (not already claimed): said once, in the table, for the admin list.
      await sql`
        INSERT INTO record_auto_indexes (name, app_id, collection, path, state, reason, created_at, last_used_at)
        SELECT ${index.name}, ${appId}, ${collection}, ${path}, 'refused',
          ${`the app already has ${limits.maxPerApp} automatic indexes: declare the fields you filter on most (collections.${collection}.indexed)`}, ${now}, ${now}
        WHERE (SELECT COUNT(*) FROM record_auto_indexes WHERE app_id = ${appId} AND state = 'refused') < ${MAX_REFUSED_PER_APP}
        ON CONFLICT (name) DO NOTHING`;
      return;
    }
    const started = Date.now();
    try {
      await ddl.build(index);
      // Statistics of the new index's expressions: without them the planner guesses its
      // selectivity and may keep scanning by creation time. ANALYZE samples, whatever the size.
      await sql.unsafe("ANALYZE records");
      const [rows] = await sql<{ n: number }[]>`SELECT COALESCE(SUM(records), 0)::bigint AS n FROM record_scopes WHERE app_id = ${appId} AND collection = ${collection}`;
      await sql`UPDATE record_auto_indexes SET state = 'ready', rows = ${rows!.n}, build_ms = ${Date.now() - started} WHERE name = ${index.name}`;
    } catch (e) {
      await ddl.drop(index.name).catch(() => undefined);
      await sql`UPDATE record_auto_indexes SET state = 'refused', reason = ${`building failed: ${(e as Error).message}`} WHERE name = ${index.name}`.catch(() => undefined);
    }
    await reload();
  }

  async function drop(name: string) {
    if (!PG_AUTO_INDEX_NAME.test(name)) throw new Error(`postgres records: refusing to drop index ${JSON.stringify(name)}`);
    await ddl.drop(name);
    await sql`DELETE FROM record_auto_indexes WHERE name = ${name}`;
  }

  function track(p: Promise<void>) {
    running.add(p);
    void p.finally(() => running.delete(p));
  }

  return {
    /** Announced on the change feed: another node built or dropped one. */
    changed() {
      loadedAt = -Infinity;
    },
    paths(appId: string, collection: string, now: number): ReadonlySet<string> | undefined {
      refresh(now);
      return paths.get(key(appId, collection));
    },
    /** A list used these automatic indexes: written at most every `touchMs` per index and node. */
    touch(appId: string, collection: string, used: string[], now: number) {
      for (const path of used) {
        const k = `${key(appId, collection)}\u0000${path}`;
        if (now - (touched.get(k) ?? -Infinity) < limits.touchMs) continue;
        remember(touched, k, now);
        track(sql`UPDATE record_auto_indexes SET last_used_at = GREATEST(last_used_at, ${now}) WHERE app_id = ${appId} AND collection = ${collection} AND path = ${path}`.then(() => undefined, () => undefined));
      }
    },
    /**
     * Fields a list used without an index: a build is claimed when the asking tenant's
     * collection holds at least `minRows` records (its kept count, not a scan).
     */
    consider(scope: { appId: string; tenantId: string; collection: string }, fields: string[], now: number) {
      const due = fields.filter((path) => {
        const k = `${key(scope.appId, scope.collection)}\u0000${path}\u0000${scope.tenantId}`;
        const at = checkedAt.get(k);
        if (at !== undefined && now - at < limits.recheckMs) return false;
        remember(checkedAt, k, now);
        return true;
      });
      if (due.length === 0) return;
      track(
        (async () => {
          const [r] = await sql<{ records: number }[]>`SELECT COALESCE(SUM(records), 0)::bigint AS records FROM record_scopes WHERE tenant_id = ${scope.tenantId} AND app_id = ${scope.appId} AND collection = ${scope.collection}`;
          if (r!.records < limits.minRows) return;
          const known = new Set(
            (await sql<{ path: string }[]>`SELECT path FROM record_auto_indexes WHERE app_id = ${scope.appId} AND collection = ${scope.collection} AND path IN ${sql(due)}`).map((x) => x.path),
          );
          // Several tenants must ask, within the app's build budget (src/data/auto-index-rule.ts).
          for (const path of due) if (!known.has(path) && rule.ask(scope.appId, scope.collection, path, scope.tenantId, now) === "build") await build(scope.appId, scope.collection, path, now);
        })().catch(() => undefined),
      );
    },
    /** Drops automatic indexes no list used for `idleMs` (any node's lists), at most every `sweepMs`. */
    sweep(now: number) {
      if (now - lastSweep < limits.sweepMs) return;
      lastSweep = now;
      track(
        (async () => {
          const idle = await sql<{ name: string }[]>`SELECT name FROM record_auto_indexes WHERE state = 'ready' AND last_used_at < ${now - limits.idleMs}`;
          for (const { name } of idle) await drop(name);
          if (idle.length > 0) await reload();
        })().catch(() => undefined),
      );
    },
    /** The declared fields' automatic indexes go (the declared index serves them). */
    async dropDeclared(appId: string, declared: { collection: string; path: string }[]) {
      for (const f of declared) {
        const [r] = await sql<{ name: string }[]>`SELECT name FROM record_auto_indexes WHERE app_id = ${appId} AND collection = ${f.collection} AND path = ${f.path}`;
        if (r) await drop(r.name);
      }
      await reload();
    },
    async dropApp(appId: string) {
      for (const { name } of await sql<{ name: string }[]>`SELECT name FROM record_auto_indexes WHERE app_id = ${appId}`) await drop(name);
      await reload();
    },
    async list(appId: string): Promise<AutoIndexInfo[]> {
      const rows = await sql<Row[]>`SELECT * FROM record_auto_indexes WHERE app_id = ${appId} ORDER BY collection, path`;
      return rows.map((r) => {
        const ready = r.state === "ready";
        return {
          collection: r.collection,
          field: r.path,
          state: ready ? "ready" : r.state === "building" ? "pending" : "refused",
          name: ready ? r.name : null,
          reason: r.reason,
          rows: ready ? r.rows : null,
          buildMs: ready ? r.buildMs : null,
          createdAt: ready ? r.createdAt : null,
          lastUsedAt: ready ? r.lastUsedAt : null,
        };
      });
    },
    async settled() {
      while (running.size > 0) await Promise.all([...running]);
    },
  };
}

export type PgAutoIndexes = ReturnType<typeof createPgAutoIndexes>;
