import type { SqliteDb } from "./connection.ts";
import type { AppSettings } from "../../apps/settings.ts";
import { dataVersionWatcher } from "./data-version.ts";
import type { AppRow } from "../types.ts";

interface RawApp {
  id: string;
  name: string;
  publishable_key: string;
  secret_key_hash: string | null;
  owner_id: string | null;
  settings: string;
  created_at: number;
  updated_at: number;
}

export type AppsRepo = ReturnType<typeof createAppsRepo>;

/**
 * Apps are read on every request (by key or id), so they are cached in memory. The cache
 * is dropped on our own writes at once, and within FRESHNESS_MS of another connection's
 * commit (the CLI, a second process), seen through SQLite's data_version (data-version.ts).
 */
export function createAppsRepo(db: SqliteDb, parseSettings: (raw: unknown) => AppSettings) {
  const toApp = (r: RawApp): AppRow => ({
    id: r.id,
    name: r.name,
    publishableKey: r.publishable_key,
    secretKeyHash: r.secret_key_hash,
    ownerId: r.owner_id,
    // Parsed once per cache load: fills defaults for sections added after the row was written.
    settings: parseSettings(JSON.parse(r.settings)),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  });

  const q = {
    insert: db.prepare<[string, string, string, string | null, string, number, number]>(
      "INSERT INTO apps (id, name, publishable_key, owner_id, settings, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ),
    all: db.prepare<[], RawApp>("SELECT * FROM apps ORDER BY created_at, id"),
    byOwner: db.prepare<[string], RawApp>("SELECT * FROM apps WHERE owner_id = ? ORDER BY created_at, id"),
    update: db.prepare<[string, string, string, number, string]>(
      "UPDATE apps SET name = ?, publishable_key = ?, settings = ?, updated_at = ? WHERE id = ?",
    ),
    setOwner: db.prepare<[string, string]>("UPDATE apps SET owner_id = ? WHERE id = ?"),
    setSecretKeyHash: db.prepare<[string, number, string]>("UPDATE apps SET secret_key_hash = ?, updated_at = ? WHERE id = ?"),
    adoptUnowned: db.prepare<[string]>("UPDATE apps SET owner_id = ? WHERE owner_id IS NULL"),
    remove: db.prepare<[string]>("DELETE FROM apps WHERE id = ?"),
    count: db.prepare<[], { n: number }>("SELECT COUNT(*) AS n FROM apps"),
  };

  let byId = new Map<string, AppRow>();
  let byKey = new Map<string, AppRow>();
  // Loaded on first use, and again after our own write or another connection's commit.
  let stale = true;
  const others = dataVersionWatcher(db);
  others.listeners.add(() => (stale = true));

  function load() {
    byId = new Map();
    byKey = new Map();
    for (const raw of q.all.all()) {
      const app = toApp(raw);
      byId.set(app.id, app);
      byKey.set(app.publishableKey, app);
    }
  }
  function fresh() {
    others.check(Date.now());
    if (!stale) return;
    load();
    stale = false;
  }
  const invalidate = () => {
    stale = true;
  };

  return {
    findById(id: string): AppRow | undefined {
      fresh();
      return byId.get(id);
    },
    findByKey(key: string): AppRow | undefined {
      fresh();
      return byKey.get(key);
    },
    /** Every app, from the cache (the CORS preflight check reads it on each OPTIONS). */
    async cached(): Promise<AppRow[]> {
      fresh();
      return [...byId.values()];
    },
    async list(ownerId?: string): Promise<AppRow[]> {
      return (ownerId ? q.byOwner.all(ownerId) : q.all.all()).map(toApp);
    },
    async count(): Promise<number> {
      return q.count.get()!.n;
    },
    async insert(app: AppRow): Promise<void> {
      q.insert.run(app.id, app.name, app.publishableKey, app.ownerId, JSON.stringify(app.settings), app.createdAt, app.updatedAt);
      invalidate();
    },
    async update(app: Pick<AppRow, "id" | "name" | "publishableKey" | "settings" | "updatedAt">): Promise<void> {
      q.update.run(app.name, app.publishableKey, JSON.stringify(app.settings), app.updatedAt, app.id);
      invalidate();
    },
    async setSecretKeyHash(appId: string, hash: string, at: number): Promise<void> {
      q.setSecretKeyHash.run(hash, at, appId);
      invalidate();
    },
    async setOwner(appId: string, ownerId: string): Promise<void> {
      q.setOwner.run(ownerId, appId);
      invalidate();
    },
    async adoptUnowned(ownerId: string): Promise<number> {
      const n = q.adoptUnowned.run(ownerId).changes;
      invalidate();
      return n;
    },
    async remove(id: string): Promise<boolean> {
      const n = q.remove.run(id).changes;
      invalidate();
      return n > 0;
    },
  };
}
