import { createHash } from "node:crypto";
import { COLLECTION_NAME } from "../../apps/settings.ts";
import { APP_ID, JSON_PATH_TEXT, jsonPath, literal, rankSql, valueSql } from "./records-sql.ts";

const hash = (s: string, n: number) => createHash("sha256").update(s).digest("hex").slice(0, n);

/** Per-app prefix of declared index names, so one app's indexes can be listed and dropped. */
export const indexPrefix = (appId: string) => `records_f_${hash(appId, 12)}_`;
/** Per-app prefix of automatic index names (src/db/sqlite/record-auto-indexes.ts): never touched by the settings sync. */
export const autoIndexPrefix = (appId: string) => `records_a_${hash(appId, 12)}_`;
/** Every name tenantd gives a per-field index; nothing else is ever dropped. */
export const INDEX_NAME = /^records_[fa]_[0-9a-f]{12}_[0-9a-f]{20}$/;

export interface FieldIndex {
  name: string;
  sql: string;
}

/**
 * The expression index of one field of one app's collection. Leads with the columns every
 * query pins, then the type rank and the value, so equality, ranges and sorts on the field
 * read only matching rows. Ends with created_at (then the implicit rowid, `seq`), so an
 * equality match comes out newest first and a field sort needs no tie-break sort. Partial
 * on the app and collection, so other apps' writes never touch it. The name is a hash: no
 * user text becomes an SQL identifier.
 */
export function fieldIndex(appId: string, collection: string, path: string, prefix = indexPrefix(appId)): FieldIndex {
  const p = literal(jsonPath(path), JSON_PATH_TEXT);
  const body =
    `ON records (app_id, tenant_id, collection, ${rankSql(p)}, ${valueSql(p)}, created_at) ` +
    `WHERE app_id = ${literal(appId, APP_ID)} AND collection = ${literal(collection, COLLECTION_NAME)}`;
  // The definition is part of the name: a changed definition gets a new index, the old one is dropped.
  const name = prefix + hash(body, 20);
  return { name, sql: `CREATE INDEX IF NOT EXISTS "${name}" ${body}` };
}

/** The same index as a declared one, named as automatic (built because filters used the field). */
export const autoFieldIndex = (appId: string, collection: string, path: string) => fieldIndex(appId, collection, path, autoIndexPrefix(appId));
