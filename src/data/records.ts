import type { Core } from "../core.ts";
import { andThen, type Awaitable } from "../awaitable.ts";
import type { TenantAuth } from "../http/guards.ts";
import type { AppRow, RecordScope, RecordRow } from "../db/types.ts";

import { COLLECTION_NAME } from "../apps/settings.ts";
import { fail } from "../errors.ts";
import { newId } from "../crypto/random.ts";
import { toIso } from "../clock.ts";
import { isPlainObject, mergePatch, type JsonObject } from "../tools/merge-patch.ts";
import { parseList, type Condition, type Json, type SortKey } from "./query.ts";
import { decodeCursor, encodeCursor, queryFingerprint } from "./cursor.ts";
import { searchTerms, type SearchLanguage } from "./text.ts";
import { recordBytesReached, recordCaps, recordLimitReached } from "../account/quotas.ts";
import { QuotaReached, UniqueConflict, valueAtPath } from "../db/shared.ts";
import { afterRecordHook, beforeRecordHook } from "../server-hooks/records.ts";

export const RECORD_LIMITS = {
  /** bytes of a record's `data`, serialized as compact JSON */
  maxDataBytes: 256 * 1024,
  /** nesting of objects and arrays inside `data` */
  maxDepth: 32,
  maxLimit: 1000,
  defaultLimit: 50,
  /** record data in one list page; past it the page ends early */
  maxPageBytes: 8 * 1024 * 1024,
} as const;

export interface PublicRecord {
  id: string;
  data: JsonObject;
  createdAt: string;
  updatedAt: string;
}

export function toPublicRecord(row: RecordRow): PublicRecord {
  return { id: row.id, data: JSON.parse(row.data) as JsonObject, createdAt: toIso(row.createdAt)!, updatedAt: toIso(row.updatedAt)! };
}

/**
 * A record as reply JSON text, the same as JSON.stringify(toPublicRecord(row)): `data` is
 * spliced in as stored, since the stored text is already compact JSON, and parsing it only
 * to serialize it again is most of what a list page costs besides the query.
 */
export function recordJson(row: RecordRow): string {
  return `{"id":${JSON.stringify(row.id)},"data":${row.data},"createdAt":"${toIso(row.createdAt)}","updatedAt":"${toIso(row.updatedAt)}"}`;
}

/** A list page as reply JSON text (see recordJson). */
export function listJson(page: ListRows): string {
  const next = page.next === undefined ? "" : `,"next":${JSON.stringify(page.next)}`;
  return `{"records":[${page.rows.map(recordJson).join(",")}],"total":${page.total},"limit":${page.limit},"offset":${page.offset}${next}}`;
}

function collectionSettings(app: AppRow, collection: string) {
  const c = Object.hasOwn(app.settings.collections, collection) ? app.settings.collections[collection] : undefined;
  return { unique: c?.unique ?? [], indexed: c?.indexed ?? [] };
}

/** The fields of a collection that get an expression index: indexed ones and unique ones. */
export function indexedFields(app: AppRow, collection: string): string[] {
  const c = collectionSettings(app, collection);
  return [...new Set([...c.indexed, ...c.unique])];
}

interface Scoped {
  scope: RecordScope;
  unique: string[];
}

/** The caller's tenant, app and collection: the predicate every record query carries. */
export function recordScope(auth: TenantAuth, collection: string): Scoped {
  if (!COLLECTION_NAME.test(collection)) {
    throw fail("invalid_request", `Collection "${collection.slice(0, 80)}" is not valid: use 1 to 64 letters or digits (A-Z, a-z, 0-9).`);
  }
  const { indexed, unique, search, org } = collectionIndexes(auth.app, collection);
  if (org !== (auth.orgId !== undefined) && !auth.everyCollection) throw wrongOwner(collection, org);
  return { scope: { appId: auth.app.id, tenantId: auth.tenantId, collection, indexed, ...(search ? { search } : {}) }, unique };
}

/**
 * recordScope for a write: marked `feed` when the realtime hub wants the app's writes
 * (src/realtime/hub.ts), so the store appends the change in the write's transaction.
 * `fed` wakes the hub once such a write committed.
 */
export function writeScope(core: Core, auth: TenantAuth, collection: string): Scoped {
  const scoped = recordScope(auth, collection);
  if (core.realtime?.wants(auth.app.id)) scoped.scope.feed = true;
  return scoped;
}

export function fed(core: Core, scope: RecordScope): void {
  if (scope.feed) core.realtime?.kick();
}

interface CollectionIndexes {
  indexed: ReadonlySet<string>;
  unique: string[];
  search?: SearchLanguage;
  /** the collection's records belong to organizations (settings.collections.<name>.org) */
  org: boolean;
}

const NO_INDEXES: CollectionIndexes = { indexed: new Set(), unique: [], org: false };

/** A tenant route on an organization collection, or an organization route on a tenant one: the message names the right route. */
function wrongOwner(collection: string, org: boolean) {
  return org
    ? fail("invalid_request", `Collection ${collection} holds organization records: use /api/v1/orgs/{orgId}/collections/${collection}/records (tenantd.orgs.collection(orgId, "${collection}") in the client).`)
    : fail("invalid_request", `Collection ${collection} is not an organization collection: a developer declares one in the app settings (collections.${collection}.org = true); a tenant's own records are under /api/v1/data/${collection}.`);
}

/**
 * Kept per app row: a change to an app's settings replaces its row (the apps cache loads a
 * new object), so an entry never goes stale. Only collections the settings name get an
 * entry; the others share one, so a tenant naming endless collections adds nothing.
 */
const indexesByApp = new WeakMap<AppRow, Map<string, CollectionIndexes>>();

/** The indexed and unique fields of a collection, built once per app row instead of per request. */
function collectionIndexes(app: AppRow, collection: string): CollectionIndexes {
  if (!Object.hasOwn(app.settings.collections, collection)) return NO_INDEXES;
  let byCollection = indexesByApp.get(app);
  if (!byCollection) indexesByApp.set(app, (byCollection = new Map()));
  let entry = byCollection.get(collection);
  if (!entry) {
    const settings = app.settings.collections[collection]!;
    const search = settings.search?.language;
    entry = { indexed: new Set(indexedFields(app, collection)), unique: collectionSettings(app, collection).unique, org: settings.org !== undefined, ...(search ? { search } : {}) };
    byCollection.set(collection, entry);
  }
  return entry;
}

/** NUL or a UTF-16 surrogate: the one test every string takes; the few that match are looked at closer. */
const NUL_OR_SURROGATE = /[\u0000\ud800-\udfff]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * Text every engine stores as sent: PostgreSQL's text and jsonb cannot hold NUL, and a lone
 * surrogate is not Unicode (jsonb refuses its escape). SQLite would keep both, so a record
 * holding one would fail to copy to PostgreSQL: refused for every engine alike.
 */
function checkText(text: string, what: "key" | "value"): void {
  if (!NUL_OR_SURROGATE.test(text)) return;
  if (text.includes("\u0000")) {
    throw fail("invalid_request", `data holds a ${what} with the NUL character (\\u0000), which records cannot store: remove it.`);
  }
  if (LONE_SURROGATE.test(text)) {
    throw fail("invalid_request", `data holds a ${what} with an unpaired UTF-16 surrogate (\\ud800-\\udfff alone), which is not Unicode text: send well-formed text.`);
  }
}

/**
 * Walks `data` once: nesting within the limit, no number JSON cannot hold (1e400 parses to
 * Infinity), and keys and strings every engine can store (checkText).
 */
function checkValues(value: unknown, level: number): void {
  if (typeof value === "string") return checkText(value, "value");
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw fail("invalid_request", "data holds a number too large for JSON (beyond ±1.8e308); store it as a string.");
  }
  if (value === null || typeof value !== "object") return;
  if (level >= RECORD_LIMITS.maxDepth) throw fail("invalid_request", `data is nested more than ${RECORD_LIMITS.maxDepth} levels deep.`);
  if (Array.isArray(value)) {
    for (const v of value) checkValues(v, level + 1);
    return;
  }
  for (const key of Object.keys(value)) {
    checkText(key, "key");
    checkValues((value as Record<string, unknown>)[key], level + 1);
  }
}

/** A record's data: a JSON object within the size and depth limits. */
export function checkData(data: unknown): JsonObject {
  if (!isPlainObject(data)) throw fail("invalid_request", "data must be a JSON object.");
  checkValues(data, 0);
  const bytes = Buffer.byteLength(JSON.stringify(data));
  if (bytes > RECORD_LIMITS.maxDataBytes) {
    throw fail("payload_too_large", `data is ${bytes} bytes as JSON; a record holds at most ${RECORD_LIMITS.maxDataBytes} bytes (256 KiB).`);
  }
  return data;
}

export const notFound = (collection: string, id: string) => fail("not_found", `No record ${id.slice(0, 80)} in collection ${collection}.`);

/** The store's refusals as a client reads them (the record quotas' 402, a unique field's 409); anything else as it is. */
export function storeError(collection: string, error: unknown): unknown {
  if (error instanceof QuotaReached) return error.kind === "bytes" ? recordBytesReached(error.cap) : recordLimitReached(error.cap);
  if (error instanceof UniqueConflict) {
    return fail("conflict", `Another record in ${collection} already has this ${error.field}: ${error.field} is unique. Change the value or update that record.`);
  }
  return error;
}

async function mapConflict<T>(collection: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    throw storeError(collection, error);
  }
}

export const patchData = (patch: JsonObject) => (current: JsonObject) => checkData(mergePatch(current, patch));

export async function createRecord(core: Core, auth: TenantAuth, collection: string, data: unknown): Promise<RecordRow> {
  const { scope, unique } = writeScope(core, auth, collection);
  if (core.serverHooks) data = await beforeRecordHook(core, "create", auth, collection, data);
  const checked = checkData(data);
  // The store checks the caps in the insert itself: on PostgreSQL one round trip instead of two.
  const caps = await recordCaps(core, auth.app, auth.tenantId, auth.orgId);
  const row = await mapConflict(collection, () => core.db.records.insert(scope, newId("rec"), checked, core.clock(), unique, caps.records, caps.bytes));
  fed(core, scope);
  return core.serverHooks ? afterRecordHook(core, "create", auth, collection, row) : row;
}

export function getRecord(core: Core, auth: TenantAuth, collection: string, id: string): Awaitable<RecordRow> {
  const { scope } = recordScope(auth, collection);
  return andThen(core.db.records.get(scope, id), (row) => {
    if (!row) throw notFound(collection, id);
    return row;
  });
}

export interface ListRows {
  rows: RecordRow[];
  total: number;
  limit: number;
  /** records before this page: for a cursor page, as counted when its cursor was issued */
  offset: number;
  /** the cursor of the page after this one; absent on the last page */
  next?: string;
}

export interface ListQuery {
  filter?: string;
  sort?: string;
  limit?: number;
  offset?: number;
  after?: string;
}

/** A list query parsed: what a page needs besides the tenant and the collection. Shared, so frozen. */
export interface ListRequest {
  readonly conditions: Condition[];
  readonly sort: SortKey[];
  readonly limit: number;
  readonly offset: number;
  /** the cursor text (`after`), decoded per tenant by listRecordRows */
  readonly after?: string;
}

export function listRequest(query: ListQuery): ListRequest {
  const { conditions, sort } = parseList(query.filter, query.sort);
  if (query.after !== undefined && query.offset !== undefined) {
    throw fail("invalid_request", "Send either offset or after, not both: after (the previous page's next) already says where the page starts.");
  }
  return Object.freeze({ conditions, sort, limit: query.limit ?? RECORD_LIMITS.defaultLimit, offset: query.offset ?? 0, after: query.after });
}

/** List query texts remembered at most (the oldest goes first), and the longest one remembered in characters. */
const LIST_QUERY_CACHE_SIZE = 1000;
const LIST_QUERY_MAX_CACHED = 2048;
const listRequests = new Map<string, ListRequest>();

/**
 * The list request of a query text, remembered by the text: an app pages through a handful
 * of filters, and a text seen before skips splitting and decoding the query, checking it and
 * looking up its filter. `read` parses and checks the text; one that fails is not remembered.
 */
export function listRequestOf(text: string, read: () => ListQuery): ListRequest {
  const known = listRequests.get(text);
  if (known !== undefined) return known;
  const request = listRequest(read());
  // A cursor is new on every page: remembering it would only push out the texts that repeat.
  if (text.length <= LIST_QUERY_MAX_CACHED && request.after === undefined) {
    if (listRequests.size >= LIST_QUERY_CACHE_SIZE) listRequests.delete(listRequests.keys().next().value!);
    listRequests.set(text, request);
  }
  return request;
}

/** A `$text` the collection can answer: its search is on, and the words are not all left out. */
function checkSearch(scope: RecordScope, search: string): void {
  if (scope.search === undefined) {
    throw fail(
      "invalid_filter",
      `Invalid filter: collection ${scope.collection} has no full-text search. A developer turns it on in the app settings: collections.${scope.collection}.search = { "language": "en" } (or es, nl, simple).`,
    );
  }
  if (searchTerms(search, scope.search).length === 0) {
    throw fail("invalid_filter", `Invalid filter: $search holds no word to look for (words are letters and digits; common words of the collection's language, ${scope.search}, are left out).`);
  }
}

export function listRecordRows(core: Core, auth: TenantAuth, collection: string, request: ListRequest): Awaitable<ListRows> {
  const { scope } = recordScope(auth, collection);
  const { limit, conditions, sort } = request;
  for (const c of conditions) if (c.op === "$text") checkSearch(scope, c.value.search);
  // Only pages that may have a next one, or that start from a cursor, fingerprint the query.
  const query = () => queryFingerprint(collection, conditions, sort);
  const start = request.after === undefined ? undefined : decodeCursor(core, auth.app.id, auth.tenantId, query(), sort, request.after);
  const offset = start ? start.at : request.offset;
  // A ranked list's cursor is a position (cursor.ts): its page reads from the offset.
  const after = start && start.terms.length > 0 ? start.terms : undefined;
  const page = { limit, offset: after ? 0 : offset, maxBytes: RECORD_LIMITS.maxPageBytes, maxRecordBytes: RECORD_LIMITS.maxDataBytes, after };
  return andThen(core.db.records.list(scope, conditions, sort, page, core.clock()), ({ records, total }) => {
    const rows: ListRows = { rows: records, total, limit, offset };
    // A full page may have a successor even when the count says otherwise (records written
    // since the cursor was issued); an empty page never has one.
    const last = records.at(-1);
    if (last && (records.length === limit || offset + records.length < total)) {
      rows.next = encodeCursor(core, auth.app.id, auth.tenantId, query(), sort, last, offset + records.length);
    }
    return rows;
  });
}

export async function listRecords(core: Core, auth: TenantAuth, collection: string, query: ListQuery) {
  const { rows, ...page } = await listRecordRows(core, auth, collection, listRequest(query));
  return { records: rows.map(toPublicRecord), ...page };
}

/** A merge patch as PUT takes it: an object, nested within the limits (checked before merging, which walks it). */
export function checkPatch(patch: unknown): JsonObject {
  if (!isPlainObject(patch)) throw fail("invalid_request", "data must be a JSON object (a merge patch).");
  checkValues(patch, 0);
  return patch;
}

/** The unique field an upsert matches on and `data`'s value of it; 400 when either is missing. */
export function upsertKey(collection: string, unique: string[], data: JsonObject): { field: string; value: Json } {
  const field = unique[0];
  if (!field) {
    throw fail("invalid_request", `Collection ${collection} has no unique field to match on: a developer sets one in the app settings (collections.${collection}.unique).`);
  }
  const value = valueAtPath(data, field) as Json | undefined;
  if (value === undefined || value === null) throw fail("invalid_request", `data.${field} is required: upsert matches records on the unique field ${field}.`);
  return { field, value };
}

/** PUT: RFC 7396 merge patch of `data`, unique fields checked in the same transaction. */
export async function updateRecord(core: Core, auth: TenantAuth, collection: string, id: string, body: unknown): Promise<RecordRow> {
  const { scope, unique } = writeScope(core, auth, collection);
  if (core.serverHooks) body = await beforeRecordHook(core, "update", auth, collection, body, id);
  const patch = checkPatch(body);
  // The store merges when it can, no unique field needs checking and no words need indexing. The result needs no
  // walk of its own: it nests no deeper than the stored data or the patch, both checked,
  // and holds no number that was not in one of them. A store that did not write (no such
  // record, the result past the size limit or the tenant's byte cap) leaves it to update(), which says which.
  // A fed write goes through update(), which has the record before the patch for the feed.
  const { bytes } = await recordCaps(core, auth.app, auth.tenantId, auth.orgId);
  const patched =
    unique.length === 0 && scope.search === undefined && !scope.feed && core.db.records.patch
      ? await core.db.records.patch(scope, id, JSON.stringify(patch), core.clock(), RECORD_LIMITS.maxDataBytes, bytes)
      : undefined;
  if (patched) return core.serverHooks ? afterRecordHook(core, "update", auth, collection, patched) : patched;
  const row = await mapConflict(collection, () => core.db.records.update(scope, id, patchData(patch), core.clock(), unique, bytes));
  if (!row) throw notFound(collection, id);
  fed(core, scope);
  return core.serverHooks ? afterRecordHook(core, "update", auth, collection, row) : row;
}

export async function deleteRecord(core: Core, auth: TenantAuth, collection: string, id: string): Promise<void> {
  const { scope } = writeScope(core, auth, collection);
  if (core.serverHooks) await beforeRecordHook(core, "delete", auth, collection, undefined, id);
  if (!(await core.db.records.remove(scope, id, core.clock()))) throw notFound(collection, id);
  fed(core, scope);
  if (core.serverHooks) await afterRecordHook(core, "delete", auth, collection, undefined, id);
}

/**
 * Upsert on the collection's first unique field: the record holding the same value is
 * merge-patched with `data` (like PUT), otherwise `data` becomes a new record.
 */
export async function upsertRecord(core: Core, auth: TenantAuth, collection: string, data: unknown): Promise<{ row: RecordRow; created: boolean }> {
  const { scope, unique } = writeScope(core, auth, collection);
  // An upsert may create: the create hook sees (and may refuse) its data, so it cannot be bypassed.
  if (core.serverHooks) data = await beforeRecordHook(core, "create", auth, collection, data);
  const checked = checkData(data);
  const { field, value } = upsertKey(collection, unique, checked);
  // An upsert that creates counts against the record quota like a create; one that updates
  // does not. Either counts against the byte quota by what it adds.
  const caps = await recordCaps(core, auth.app, auth.tenantId, auth.orgId);
  const result = await mapConflict(collection, () =>
    core.db.records.upsert(scope, { field, value }, newId("rec"), checked, patchData(checked), core.clock(), unique, caps.records, caps.bytes),
  );
  fed(core, scope);
  if (core.serverHooks) await afterRecordHook(core, result.created ? "create" : "update", auth, collection, result.row);
  return result;
}
