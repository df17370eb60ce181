import type { Core } from "./core.ts";
import type { ListOptions, MergePatch, TextSearch } from "./filter.ts";
import type { BatchOperation, BatchResult, DataRecord, JsonObject, RecordList, ShareLink, WriteOptions } from "./types.ts";
import type { Filter } from "./filter.ts";
import type { Realtime, RealtimeEvent, Unsubscribe } from "./realtime.ts";

const seg = encodeURIComponent;

/** The request options of a write: the tenant's bearer, and its idempotency key when given. */
export const writeOptions = (opts: WriteOptions = {}) => ({ auth: "tenant", ...(opts.idempotencyKey === undefined ? {} : { headers: { "idempotency-key": opts.idempotencyKey } }) }) as const;

/**
 * One collection of the tenant's records; `T` is the shape of each record's `data`. `path` is
 * where the records are when they are not the tenant's own (an organization's: orgs.ts).
 */
export function collectionApi<T extends object = JsonObject>(core: Core, name: string, realtime?: Realtime, path?: string) {
  const { request } = core;
  const base = path ?? `/api/v1/data/${seg(name)}`;
  const tenant = { auth: "tenant" } as const;
  const list = (opts: ListOptions<T> = {}): Promise<RecordList<T>> =>
    request("GET", base, {
      ...tenant,
      query: {
        filter: opts.filter && JSON.stringify(opts.filter),
        sort: opts.sort && JSON.stringify(opts.sort),
        limit: opts.limit,
        offset: opts.offset,
        after: opts.after,
      },
    });
  return {
    create: async (data: T, opts?: WriteOptions): Promise<DataRecord<T>> => (await request<{ record: DataRecord<T> }>("POST", base, { ...writeOptions(opts), body: { data } })).record,
    get: async (id: string): Promise<DataRecord<T>> => (await request<{ record: DataRecord<T> }>("GET", `${base}/${seg(id)}`, tenant)).record,
    /** Newest first unless `sort` says otherwise; `total` counts every match. */
    list,
    /**
     * Full-text search (the collection's search must be on): records holding every word of
     * `text` (`word*`: a prefix), in `fields` when given; with the rest of a list's options.
     * `rank: true` puts the best matches first (`sort` then breaks ties); `next` pages on.
     */
    search: (text: string, opts: ListOptions<T> & { fields?: TextSearch<T>["fields"]; rank?: boolean } = {}): Promise<RecordList<T>> => {
      const { fields, rank, ...rest } = opts;
      const filter = { ...rest.filter, $text: { $search: text, ...(fields ? { fields } : {}) } } as ListOptions<T>["filter"];
      return list({ ...rest, filter, ...(rank ? { sort: { $rank: -1, ...rest.sort } as ListOptions<T>["sort"] } : {}) });
    },
    /** JSON Merge Patch of `data`: keys set to null are removed. */
    update: async (id: string, patch: MergePatch<T>, opts?: WriteOptions): Promise<DataRecord<T>> =>
      (await request<{ record: DataRecord<T> }>("PUT", `${base}/${seg(id)}`, { ...writeOptions(opts), body: { data: patch } })).record,
    delete: async (id: string, opts?: WriteOptions): Promise<void> => {
      await request("DELETE", `${base}/${seg(id)}`, writeOptions(opts));
    },
    /** Creates, or updates the record with the same value of the collection's unique field. */
    upsert: (data: T, opts?: WriteOptions): Promise<{ record: DataRecord<T>; created: boolean }> => request("POST", `${base}/upsert`, { ...writeOptions(opts), body: { data } }),
    /** A public read link; `token` goes to `readShared` (or GET /api/v1/public/shared/{token}). */
    share: async (id: string, opts: { expiresInSeconds?: number } = {}): Promise<ShareLink> =>
      (await request<{ shareToken: ShareLink }>("POST", `${base}/${seg(id)}/share`, { ...tenant, body: opts })).shareToken,
    revokeShares: (id: string): Promise<{ revoked: number }> => request("DELETE", `${base}/${seg(id)}/share`, tenant),
    readShared: (token: string): Promise<DataRecord<T>> => readShared<T>(core, token),
    /**
     * Live changes to the records that match `filter` (`{}`: all of them), over the client's
     * one shared stream (docs/realtime.md). Returns the function that stops them.
     */
    subscribe: (filter: Filter<T> | Record<string, never>, handler: (event: RealtimeEvent<T>) => void): Unsubscribe => {
      if (!realtime) throw new TypeError("subscribe needs the collection of a client: createClient(...).collection(name).");
      return realtime.subscribe<T>(name, filter, handler);
    },
    /** Live changes to one record. Returns the function that stops them. */
    subscribeRecord: (id: string, handler: (event: RealtimeEvent<T>) => void): Unsubscribe => {
      if (!realtime) throw new TypeError("subscribeRecord needs the collection of a client: createClient(...).collection(name).");
      return realtime.subscribeRecord<T>(name, id, handler);
    },
  };
}

/** A record behind a share link; no sign-in needed. */
export async function readShared<T extends object = JsonObject>(core: Core, token: string): Promise<DataRecord<T>> {
  return (await core.request<{ record: DataRecord<T> }>("GET", `/api/v1/public/shared/${seg(token)}`)).record;
}

/**
 * Up to 100 operations in one transaction: all are written or none. Resolves with each
 * operation's answer in order; rejects with the failing operation's error (its message names
 * `operations[i]`), nothing written.
 */
export async function batch(core: Core, operations: BatchOperation[], opts?: WriteOptions, path = "/api/v1/batch"): Promise<BatchResult[]> {
  return (await core.request<{ results: BatchResult[] }>("POST", path, { ...writeOptions(opts), body: { operations } })).results;
}
