import type { SqliteDb } from "./connection.ts";
import { FRESHNESS_MS } from "../shared.ts";

/**
 * Per connection: one `data_version` reading, paced by the callers' clock, shared by its
 * in-memory caches (apps, session states, tenant rows, the entitlements version), so another
 * process's commit (the CLI changing an app, ending a session, granting a plan) is seen
 * within FRESHNESS_MS. Reading `data_version` costs as much as the query a cache saves (a
 * read transaction: two file locks), so it is read at most that often.
 */
export interface DataVersionWatcher {
  /** Calls every listener when another connection has committed since the last look; unpaced without `now`. */
  check(now: number | undefined): void;
  /** What runs when another connection's commit is seen (empty a cache, move a version). */
  listeners: Set<() => void>;
}

const watchers = new WeakMap<SqliteDb, DataVersionWatcher>();

export function dataVersionWatcher(db: SqliteDb): DataVersionWatcher {
  let w = watchers.get(db);
  if (w) return w;
  const dataVersion = db.prepare("PRAGMA data_version").pluck();
  let seenVersion: unknown = dataVersion.get();
  let checkedAt = -Infinity;
  const listeners = new Set<() => void>();
  w = {
    listeners,
    check(now) {
      if (now !== undefined && now - checkedAt < FRESHNESS_MS && now >= checkedAt) return;
      checkedAt = now ?? -Infinity;
      const version = dataVersion.get();
      if (version === seenVersion) return;
      seenVersion = version;
      for (const listener of listeners) listener();
    },
  };
  watchers.set(db, w);
  return w;
}
