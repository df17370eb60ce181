import * as v from "valibot";
import type { Core } from "../core.ts";
import { whole } from "../admin/tenant-routes.ts";
import type { AppRow } from "../db/types.ts";
import { toIso } from "../clock.ts";
import { indexedFields } from "./records.ts";

/** A page of the automatic indexes (each app has at most 16 built and 64 refused). */
export const IndexesQuery = v.object({ limit: v.optional(whole(1, 200, "limit"), "100"), offset: v.optional(whole(0, Number.MAX_SAFE_INTEGER, "offset"), "0") });

/**
 * The record indexes of an app: the fields its settings declare (indexed and unique) and a
 * page of the ones tenantd built on its own because lists filtered or sorted on them, with
 * their total.
 */
export async function listIndexes(core: Core, app: AppRow, page: { limit: number; offset: number } = { limit: 100, offset: 0 }) {
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
  return { declared, automatic: automatic.slice(page.offset, page.offset + page.limit), total: automatic.length, limit: page.limit, offset: page.offset };
}
