import { createHash } from "node:crypto";
import { COLLECTION_NAME } from "../../apps/settings.ts";
import { fieldExprs, fieldSortExprs, literal } from "./records-sql.ts";

const APP_ID = /^[A-Za-z0-9_]{1,64}$/;
const hash = (s: string, n: number) => createHash("sha256").update(s).digest("hex").slice(0, n);

/** Per-app prefix of index names, so one app's indexes can be listed and dropped (as on SQLite). */
export const pgIndexPrefix = (appId: string) => `records_f_${hash(appId, 12)}_`;
export const PG_INDEX_NAME = /^records_f_[0-9a-f]{12}_[0-9a-f]{20}$/;

/**
 * The expression index of one field of one app's collection: the tenant, then the field's
 * rank and typed values in the order queries sort them, then created_at and seq. Equality
 * and ranges (which also pin the rank) read only matching entries; a sort on the field
 * walks the index. Partial on the app and collection; the name is a hash of the definition.
 */
export function pgFieldIndex(appId: string, collection: string, path: string): { name: string; sql: string } {
  const body = indexBody(appId, collection, path);
  const name = pgIndexPrefix(appId) + hash(body, 20);
  // CONCURRENTLY: the build reads the table without blocking any app's writes.
  return { name, sql: `CREATE INDEX CONCURRENTLY IF NOT EXISTS "${name}" ${body}` };
}

function indexBody(appId: string, collection: string, path: string): string {
  const columns = ["tenant_id", ...fieldSortExprs(fieldExprs(path)), "created_at", "seq"].join(", ");
  return `ON records (${columns}) WHERE app_id = ${literal(appId, APP_ID)} AND collection = ${literal(collection, COLLECTION_NAME)}`;
}

/** Automatic indexes (auto-indexes.ts): the same definition under their own prefix, which declared syncs leave alone. */
export const PG_AUTO_INDEX_NAME = /^records_a_[0-9a-f]{12}_[0-9a-f]{20}$/;
export function pgAutoIndex(appId: string, collection: string, path: string): { name: string; sql: string } {
  const body = indexBody(appId, collection, path);
  const name = `records_a_${hash(appId, 12)}_${hash(body, 20)}`;
  return { name, sql: `CREATE INDEX CONCURRENTLY IF NOT EXISTS "${name}" ${body}` };
}
