import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { indexedFields } from "./records.ts";

const wantedIndexes = (app: AppRow) =>
  Object.keys(app.settings.collections).flatMap((collection) => indexedFields(app, collection).map((path) => ({ collection, path })));

/**
 * Keeps the per-field record indexes in step with app settings: built or dropped when a
 * developer changes them, and checked at startup (settings may have been written by an
 * older tenantd or restored from a backup).
 */
export function installData(core: Core): void {
  core.hooks.on("app.settingsChanged", ({ app }) => core.db.records.syncIndexes(app.id, wantedIndexes(app)));
  core.hooks.on("app.deleting", async ({ app }) => {
    await core.db.records.syncIndexes(app.id, []);
    await core.db.records.dropAutoIndexes(app.id);
  });
  const startup = syncAll(core).catch((error: Error) => core.log.error("record index sync failed", { error: error.message }));
  // A short CLI command may close the core at once: let the sync finish on this connection first.
  core.onClose(() => startup);
  // An automatic index queued by the last requests is built (or skipped) before the database closes.
  core.onClose(() => core.db.records.autoIndexesSettled());
}

async function syncAll(core: Core): Promise<void> {
  const apps = await core.db.apps.list();
  for (const app of apps) await core.db.records.syncIndexes(app.id, wantedIndexes(app));
  await core.db.records.dropIndexesExcept(apps.map((a) => a.id));
}
