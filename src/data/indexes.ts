import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { toIso } from "../clock.ts";
import { indexedFields } from "./records.ts";

/**
 * The record indexes of an app: the fields its settings declare (indexed and unique) and
 * the ones tenantd built on its own because lists filtered or sorted on them.
 */
export async function listIndexes(core: Core, app: AppRow) {
  const declared = Object.keys(app.settings.collections).flatMap((collection) => indexedFields(app, collection).map((field) => ({ collection, field })));
  const automatic = (await core.db.records.autoIndexes(app.id)).map((i) => ({
    collection: i.collection,
    field: i.field,
    state: i.state,
    reason: i.reason,
    rows: i.rows,
    buildMs: i.buildMs,
    createdAt: toIso(i.createdAt),
    lastUsedAt: toIso(i.lastUsedAt),
  }));
  return { declared, automatic };
}
