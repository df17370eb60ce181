import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { indexedFields } from "./records.ts";

const wantedIndexes = (app: AppRow) =>
  Object.keys(app.settings.collections).flatMap((collection) => indexedFields(app, collection).map((path) => ({ collection, path })));

/** The collections with full-text search on, and their languages. */
const wantedSearch = (app: AppRow) =>
  Object.entries(app.settings.collections).flatMap(([collection, c]) => (c.search ? [{ collection, language: c.search.language }] : []));

/**
 * Keeps the per-field record indexes and the full-text index in step with app settings: built or dropped when a
 * developer changes them, and checked at startup (settings may have been written by an
 * older tenantd or restored from a backup).
 */
export function installData(core: Core): void {
  const sync = appIndexSync(core);
  core.hooks.on("app.settingsChanged", ({ app }) => sync(app.id));
  core.hooks.on("app.deleting", async ({ app }) => {
    await sync(app.id, []);
    await core.db.records.dropAutoIndexes(app.id);
  });
  const startup = syncAll(core, sync).catch((error: Error) => core.log.error("record index sync failed", { error: error.message }));
  // A short CLI command may close the core at once: let the sync finish on this connection first.
  core.onClose(() => startup);
  // A build in progress stops between two of its steps (SQLite: the next start goes on with
  // it), or is waited for where it cannot (PostgreSQL), before the database closes.
  core.onClose(() => (core.db.records.stopIndexBuilds ? core.db.records.stopIndexBuilds() : core.db.records.autoIndexesSettled()));
}

type Fields = { collection: string; path: string }[];

/**
 * The core's index sync. Syncs of one app run one after another, each reading the app's
 * settings when its turn comes. The startup sync used to apply the settings it had listed
 * first: on PostgreSQL, a settings change made while it still ran (an admin call right after
 * start) had its new indexes dropped again by the older settings.
 */
export function appIndexSync(core: Core): AppIndexSync {
  let sync = syncs.get(core);
  if (!sync) syncs.set(core, (sync = createAppIndexSync(core)));
  return sync;
}

type AppIndexSync = (appId: string, fields?: Fields) => Promise<void>;
const syncs = new WeakMap<Core, AppIndexSync>();

function createAppIndexSync(core: Core): AppIndexSync {
  const queues = new Map<string, Promise<void>>();
  return (appId, fields) => {
    const run = (queues.get(appId) ?? Promise.resolve()).then(async () => {
      let wanted = fields;
      const app = wanted ? undefined : await core.db.apps.findById(appId);
      wanted ??= app && wantedIndexes(app);
      // An app deleted meanwhile: its deletion dropped its indexes.
      if (wanted) await core.db.records.syncIndexes(appId, wanted);
      // The full-text index follows the settings too (records written before search was on get their words).
      if (app) await core.db.records.syncSearch(appId, wantedSearch(app));
    });
    const settled = run.catch(() => {});
    queues.set(appId, settled);
    void settled.then(() => {
      if (queues.get(appId) === settled) queues.delete(appId);
    });
    return run;
  };
}

async function syncAll(core: Core, sync: AppIndexSync): Promise<void> {
  const apps = await core.db.apps.list();
  for (const app of apps) await sync(app.id);
  await core.db.records.dropIndexesExcept(apps.map((a) => a.id));
}
