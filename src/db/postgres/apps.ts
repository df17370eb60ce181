import type { PgSql } from "./connection.ts";
import type { AppsRepository } from "../repositories.ts";

import type { AppRow } from "../types.ts";
import type { AppSettings } from "../../apps/settings.ts";
import { FRESHNESS_MS } from "../shared.ts";

type RawApp = Omit<AppRow, "settings"> & { settings: string };

/**
 * Apps are read on every request, so they are cached in memory like on SQLite. Our own
 * writes drop the cache at once; another process's (the CLI, another node) show within
 * FRESHNESS_MS through a change counter a trigger keeps on the apps table.
 */
export function createPgAppsRepo(sql: PgSql, parseSettings: (raw: unknown) => AppSettings): AppsRepository {
  const toApp = (r: RawApp): AppRow => ({ ...r, settings: parseSettings(JSON.parse(r.settings)) });
  const all = () => sql<RawApp[]>`SELECT * FROM apps ORDER BY created_at, id`;

  let byId = new Map<string, AppRow>();
  let byKey = new Map<string, AppRow>();
  let loadedVersion: number | undefined;
  let checkedAt = 0;
  let pending: Promise<void> | undefined;

  async function refresh() {
    const [c] = await sql<{ n: number }[]>`SELECT n FROM change_counters WHERE name = 'apps'`;
    if (c!.n === loadedVersion) return;
    const rows = await all();
    const nextById = new Map<string, AppRow>();
    const nextByKey = new Map<string, AppRow>();
    for (const raw of rows) {
      const app = toApp(raw);
      nextById.set(app.id, app);
      nextByKey.set(app.publishableKey, app);
    }
    // The counter was read first: a change committed meanwhile makes the next check reload.
    byId = nextById;
    byKey = nextByKey;
    loadedVersion = c!.n;
  }
  async function fresh() {
    const now = Date.now();
    if (loadedVersion !== undefined && now - checkedAt < FRESHNESS_MS) return;
    // Concurrent requests share one check instead of each asking the database.
    pending ??= refresh().finally(() => {
      pending = undefined;
    });
    await pending;
    checkedAt = now;
  }
  const invalidate = () => {
    loadedVersion = undefined;
  };

  return {
    async findById(id) {
      await fresh();
      return byId.get(id);
    },
    async findByKey(key) {
      await fresh();
      return byKey.get(key);
    },
    async cached() {
      await fresh();
      return [...byId.values()];
    },
    async list(ownerId) {
      const rows = ownerId ? await sql<RawApp[]>`SELECT * FROM apps WHERE owner_id = ${ownerId} ORDER BY created_at, id` : await all();
      return rows.map(toApp);
    },
    async count() {
      const [r] = await sql<{ n: number }[]>`SELECT COUNT(*) AS n FROM apps`;
      return r!.n;
    },
    async insert(app) {
      await sql`INSERT INTO apps (id, name, publishable_key, owner_id, settings, created_at, updated_at)
        VALUES (${app.id}, ${app.name}, ${app.publishableKey}, ${app.ownerId}, ${JSON.stringify(app.settings)}, ${app.createdAt}, ${app.updatedAt})`;
      invalidate();
    },
    async update(app) {
      await sql`UPDATE apps SET name = ${app.name}, publishable_key = ${app.publishableKey}, settings = ${JSON.stringify(app.settings)}, updated_at = ${app.updatedAt}
        WHERE id = ${app.id}`;
      invalidate();
    },
    async setSecretKeyHash(appId, hash, at) {
      await sql`UPDATE apps SET secret_key_hash = ${hash}, updated_at = ${at} WHERE id = ${appId}`;
      invalidate();
    },
    async setOwner(appId, ownerId) {
      await sql`UPDATE apps SET owner_id = ${ownerId} WHERE id = ${appId}`;
      invalidate();
    },
    async adoptUnowned(ownerId) {
      const r = await sql`UPDATE apps SET owner_id = ${ownerId} WHERE owner_id IS NULL`;
      invalidate();
      return r.count;
    },
    async remove(id) {
      const r = await sql`DELETE FROM apps WHERE id = ${id}`;
      invalidate();
      return r.count > 0;
    },
  };
}
