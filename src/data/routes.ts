import * as v from "valibot";
import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson } from "../http/body.ts";
import { requireDeveloper, requireOwnApp, requireTenant, type TenantAuth } from "../http/guards.ts";
import { quiet } from "../http/lifecycle.ts";
import { andThen, type Awaitable } from "../awaitable.ts";
import { createRecord, deleteRecord, getRecord, listJson, listRecordRows, listRequestOf, recordJson, RECORD_LIMITS, updateRecord, upsertRecord } from "./records.ts";
import { jsonText } from "../http/json-text.ts";
import { createShareLink, MAX_SHARE_SECONDS, readShared, revokeShareLinks } from "./share.ts";
import { IndexesQuery, listIndexes } from "./indexes.ts";
import { MAX_CURSOR_CHARS } from "./cursor.ts";
import { BatchBody, runBatch, type BatchOperation, type WriteReply } from "./batch.ts";
import { idempotencyKeyOf, idempotentWrite, send } from "./idempotency.ts";

// `data` is checked by checkData (object, size, depth) without valibot copying it, so keys
// such as "__proto__" survive as the client sent them.
export const DataBody = v.object({ data: v.unknown() });
export const ShareBody = v.object({
  expiresInSeconds: v.optional(
    v.pipe(
      v.number("must be a number of seconds"),
      v.integer("must be a whole number of seconds"),
      v.minValue(1, "must be at least 1"),
      v.maxValue(MAX_SHARE_SECONDS, `must be at most ${MAX_SHARE_SECONDS} (365 days); omit it for a link that never expires`),
    ),
  ),
});
const queryInt = (min: number, max: number, what: string) =>
  v.pipe(v.string(what), v.regex(/^\d{1,10}$/, what), v.transform(Number), v.minValue(min, what), v.maxValue(max, what));
export const ListQuery = v.object({
  filter: v.optional(v.string("filter must appear once")),
  sort: v.optional(v.string("sort must appear once")),
  limit: v.optional(queryInt(1, RECORD_LIMITS.maxLimit, `limit must be an integer from 1 to ${RECORD_LIMITS.maxLimit}`)),
  offset: v.optional(queryInt(0, Number.MAX_SAFE_INTEGER, "offset must be an integer of 0 or more")),
  after: v.optional(v.pipe(v.string("after must appear once"), v.minLength(1, "after must be the next value of a previous page"), v.maxLength(MAX_CURSOR_CHARS, "after is too long to be a cursor"))),
});

const param = (event: H3Event, name: string) => getRouterParam(event, name) ?? "";

/** Whether a route reads or writes the records: an organization's checks a different permission for each. */
export type RecordAccess = "read" | "write";

/**
 * Who owns the records a request reaches, or the request's refusal: the signed-in tenant on
 * /api/v1/data, an organization on /api/v1/orgs/{orgId}/… (src/orgs/records.ts). A read may
 * come with `check` still running (the organization's membership): the read runs beside it
 * and is answered only once it passed, its refusal first.
 */
export type RecordGuard = (event: H3Event, access: RecordAccess, collection: string) => Awaitable<{ auth: TenantAuth; check?: Promise<unknown> }>;

/** The handler's answer once `check` passed; a refused check is the answer whatever the handler did. */
function afterCheck<R>(check: Promise<unknown>, run: () => Awaitable<R>): Promise<R> {
  const result = Promise.resolve().then(run);
  result.catch(() => undefined);
  return check.then(() => result);
}

/** The record reads and writes are quiet routes (src/http/lifecycle.ts): they write no log line of their own. */
export function registerDataRoutes(router: Router, core: Core): void {
  const guard: RecordGuard = (event) => andThen(requireTenant(event, core), (auth) => ({ auth }));
  registerRecordRoutes(router, core, "/api/v1/data/:collection", "/api/v1/batch", guard);
  registerDataExtras(router, core);
}

/**
 * The routes over one owner's records, under `base` (which holds :collection) and the batch
 * at `batchPath`: the tenant's and the organization's are the same handlers with another guard.
 */
export function registerRecordRoutes(router: Router, core: Core, base: string, batchPath: string, guard: RecordGuard): void {
  const limit = core.config.maxJsonBytes;
  const route = <R>(access: RecordAccess, handler: (event: H3Event, auth: TenantAuth) => Awaitable<R>) =>
    quiet((event: H3Event) => andThen(guard(event, access, param(event, "collection")), ({ auth, check }) => (check ? afterCheck(check, () => handler(event, auth)) : handler(event, auth))));

  /**
   * A write sent with an Idempotency-Key runs as a batch of one (src/data/idempotency.ts), so
   * its answer is kept in its transaction; without a key, undefined and the usual path runs.
   */
  const keyed = (event: H3Event, auth: TenantAuth, op: BatchOperation, body?: unknown) => {
    const key = idempotencyKeyOf(event);
    if (key === undefined) return undefined;
    return idempotentWrite(core, event, auth, key, `${event.req.method} ${event.url.pathname}\n${JSON.stringify(body ?? null)}`, [op], true);
  };

  router.post(
    batchPath,
    route("write", async (event, auth) => {
      const body = await readJson(event, BatchBody, limit);
      const key = idempotencyKeyOf(event);
      if (key !== undefined) return idempotentWrite(core, event, auth, key, `POST ${event.url.pathname}\n${JSON.stringify(body)}`, body.operations, false);
      return send(event, (await runBatch(core, auth, body.operations)) as WriteReply);
    }),
  );

  router.post(
    base,
    route("write", async (event, auth) => {
      const body = await readJson(event, DataBody, limit);
      const replay = keyed(event, auth, { op: "create", collection: param(event, "collection"), data: body.data }, body);
      if (replay) return replay;
      const row = await createRecord(core, auth, param(event, "collection"), body.data);
      event.res.status = 201;
      return jsonText(`{"record":${recordJson(row)}}`);
    }),
  );

  router.get(
    base,
    route("read", (event, auth) => {
      const request = listRequestOf(event.url.search, () => parseInput(ListQuery, getQuery(event), "query"));
      return andThen(listRecordRows(core, auth, param(event, "collection"), request), (page) => jsonText(listJson(page)));
    }),
  );

  router.post(
    `${base}/upsert`,
    route("write", async (event, auth) => {
      const body = await readJson(event, DataBody, limit);
      const replay = keyed(event, auth, { op: "upsert", collection: param(event, "collection"), data: body.data }, body);
      if (replay) return replay;
      const { row, created } = await upsertRecord(core, auth, param(event, "collection"), body.data);
      event.res.status = created ? 201 : 200;
      return jsonText(`{"record":${recordJson(row)},"created":${created}}`);
    }),
  );

  router.get(
    `${base}/:id`,
    route("read", (event, auth) => andThen(getRecord(core, auth, param(event, "collection"), param(event, "id")), (row) => jsonText(`{"record":${recordJson(row)}}`))),
  );

  router.put(
    `${base}/:id`,
    route("write", async (event, auth) => {
      const body = await readJson(event, DataBody, limit);
      const replay = keyed(event, auth, { op: "update", collection: param(event, "collection"), id: param(event, "id"), data: body.data }, body);
      if (replay) return replay;
      return jsonText(`{"record":${recordJson(await updateRecord(core, auth, param(event, "collection"), param(event, "id"), body.data))}}`);
    }),
  );

  router.delete(
    `${base}/:id`,
    route("write", async (event, auth) => {
      const replay = keyed(event, auth, { op: "delete", collection: param(event, "collection"), id: param(event, "id") });
      if (replay) return replay;
      await deleteRecord(core, auth, param(event, "collection"), param(event, "id"));
      event.res.status = 204;
      return null;
    }),
  );

  router.post(`${base}/:id/share`, async (event) => {
    const { auth } = await guard(event, "write", param(event, "collection"));
    const body = await readJson(event, ShareBody, limit);
    const shareToken = await createShareLink(core, auth, param(event, "collection"), param(event, "id"), body.expiresInSeconds);
    event.res.status = 201;
    return { shareToken };
  });

  router.delete(`${base}/:id/share`, async (event) => {
    const { auth } = await guard(event, "write", param(event, "collection"));
    return revokeShareLinks(core, auth, param(event, "collection"), param(event, "id"));
  });
}

/** The public share links and the admin view of indexes: one of each, whoever owns the records. */
function registerDataExtras(router: Router, core: Core): void {
  router.get("/api/v1/public/shared/:token", async (event) => readShared(core, param(event, "token")));

  // The record indexes of an app, declared and automatic (admin API: a developer session).
  router.get("/api/v1/admin/apps/:appId/indexes", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const page = parseInput(IndexesQuery, getQuery(event), "query");
    return listIndexes(core, await requireOwnApp(core, developer, getRouterParam(event, "appId")), page);
  });
}
