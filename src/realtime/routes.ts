import * as v from "valibot";
import { getQuery, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput, readJson } from "../http/body.ts";
import { clientIp, noStore, requireTenant } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { hashToken, newToken } from "../crypto/random.ts";
import { COLLECTION_NAME } from "../apps/settings.ts";
import { allowOriginFor } from "../http/cors.ts";
import { requireSubscribable } from "../orgs/records.ts";
import type { HubRefusal, RealtimeHub, StreamOwner, SubscriptionSpec } from "./hub.ts";

/** A stream's reply headers. */
export const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-store",
  // nginx and similar proxies buffer replies unless told not to: events would wait.
  "x-accel-buffering": "no",
};

/** A ticket is good for this long, once. */
export const TICKET_SECONDS = 30;

const Id = (what: string) => v.pipe(v.string(`${what} must be a string`), v.minLength(1, `${what} must not be empty`), v.maxLength(100, `${what} is at most 100 characters`));

const Spec = v.object({
  /** The client's own name for the subscription, so events can be routed before the answer arrives. */
  id: v.optional(v.pipe(v.string("id must be a string"), v.regex(/^[A-Za-z0-9_-]{1,64}$/, "id must be 1 to 64 letters, digits, _ or -"))),
  collection: v.string("collection must be a string"),
  filter: v.optional(v.union([v.string(), v.record(v.string(), v.unknown())], "filter must be a JSON object (or its JSON text) in the list filter language")),
  record: v.optional(Id("record")),
  /** An organization's records (docs/organizations.md#organization-records) instead of the tenant's own. */
  org: v.optional(Id("org")),
});

export const SubscribeBody = v.object({
  stream: Id("stream"),
  id: Spec.entries.id,
  collection: v.optional(v.string("collection must be a string")),
  filter: Spec.entries.filter,
  record: Spec.entries.record,
  org: Spec.entries.org,
  subscriptions: v.optional(v.pipe(v.array(Spec, "subscriptions must be an array"), v.minLength(1, "subscriptions must hold at least one subscription"), v.maxLength(100, "at most 100 subscriptions per request"))),
});

export const UnsubscribeQuery = v.object({
  stream: Id("stream"),
  id: v.union([Id("id"), v.pipe(v.array(Id("id")), v.minLength(1), v.maxLength(100, "at most 100 ids per request"))], "id must name the subscription(s) to remove"),
});

function toSpec(s: v.InferOutput<typeof Spec>): SubscriptionSpec {
  if (!COLLECTION_NAME.test(s.collection)) {
    throw fail("invalid_request", `Collection "${s.collection.slice(0, 80)}" is not valid: use 1 to 64 letters or digits (A-Z, a-z, 0-9).`);
  }
  if (s.record !== undefined && s.filter !== undefined) throw fail("invalid_request", "A subscription takes a filter (records of the collection that match it) or a record id, not both.");
  const filter = s.filter === undefined ? undefined : typeof s.filter === "string" ? s.filter : JSON.stringify(s.filter);
  return {
    collection: s.collection,
    ...(s.id !== undefined && { id: s.id }),
    ...(filter !== undefined && { filter }),
    ...(s.record !== undefined && { record: s.record }),
    ...(s.org !== undefined && { org: s.org }),
  };
}

function refusal(r: HubRefusal): never {
  throw fail(r.refused.code, r.refused.message);
}

/** The stream's owner from a one-use ticket (EventSource cannot send headers), or from the bearer headers. */
async function streamOwner(event: H3Event, core: Core): Promise<StreamOwner> {
  const ticket = getQuery(event).ticket;
  const ip = clientIp(event, core);
  if (ticket === undefined) {
    const auth = await requireTenant(event, core);
    return { appId: auth.app.id, tenantId: auth.tenantId, sessionId: auth.sessionId, ip };
  }
  if (typeof ticket !== "string" || ticket.length > 200) throw fail("unauthorized", "ticket must appear once: the value from POST /api/v1/realtime/ticket.");
  const now = core.clock();
  const row = await core.db.realtime.takeTicket(hashToken(ticket), now);
  if (!row) throw fail("unauthorized", `Unknown, used or expired ticket: a ticket opens one stream, within ${TICKET_SECONDS} s. Get a new one from POST /api/v1/realtime/ticket.`);
  // EventSource from another origin: the ticket names the app whose origins decide.
  const app = await core.db.apps.findById(row.appId);
  if (!app) throw fail("unauthorized", "The ticket's app no longer exists.");
  allowOriginFor(event, app);
  const session = await core.db.sessions.state(row.sessionId, now);
  if (!session || session.endedAt !== null || session.expiresAt <= now || session.tenantId !== row.tenantId) {
    throw fail("session_ended", "This session has ended (signed out, password reset or account deleted). Sign in again.");
  }
  return { appId: row.appId, tenantId: row.tenantId, sessionId: row.sessionId, ip };
}

function hubOf(core: Core): RealtimeHub {
  if (!core.realtime) throw fail("unavailable", "Realtime is not running in this process.");
  return core.realtime;
}

/** Realtime: one SSE stream per client, subscriptions added to it by id (docs/realtime.md). */
export function registerRealtimeRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;

  router.post("/api/v1/realtime/ticket", async (event) => {
    const auth = await requireTenant(event, core);
    noStore(event);
    const ticket = newToken("rtt");
    await core.db.realtime.addTicket(hashToken(ticket), { appId: auth.app.id, tenantId: auth.tenantId, sessionId: auth.sessionId, expiresAt: core.clock() + TICKET_SECONDS * 1000 });
    event.res.status = 201;
    return { ticket, expiresIn: TICKET_SECONDS };
  });

  router.get("/api/v1/realtime", async (event) => {
    const owner = await streamOwner(event, core);
    const query = getQuery(event).lastEventId;
    const lastEventId = event.req.headers.get("last-event-id") ?? (typeof query === "string" ? query : undefined);
    const opened = await hubOf(core).open(owner, lastEventId ?? undefined);
    if ("limit" in opened) throw fail("rate_limited", opened.limit, { "retry-after": "5" });
    return new Response(opened, { headers: SSE_HEADERS });
  });

  router.post("/api/v1/realtime/subscriptions", async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, SubscribeBody, limit);
    const single = body.subscriptions === undefined;
    if (single && body.collection === undefined) throw fail("invalid_request", "Name the collection to subscribe to (collection, with filter or record), or send subscriptions: [...].");
    if (!single && (body.id !== undefined || body.collection !== undefined || body.filter !== undefined || body.record !== undefined || body.org !== undefined)) {
      throw fail("invalid_request", "Send one subscription (collection, filter or record) or a list of them (subscriptions), not both.");
    }
    const specs = single ? [toSpec({ id: body.id, collection: body.collection!, filter: body.filter, record: body.record, org: body.org })] : body.subscriptions!.map(toSpec);
    for (const spec of specs) await requireSubscribable(core, auth, spec);
    const added = await hubOf(core).subscribe(auth.app.id, auth.tenantId, body.stream, specs);
    if ("refused" in added) refusal(added);
    event.res.status = 201;
    return single ? { subscription: added[0] } : { subscriptions: added };
  });

  router.delete("/api/v1/realtime/subscriptions", async (event) => {
    const auth = await requireTenant(event, core);
    const query = parseInput(UnsubscribeQuery, getQuery(event), "query");
    const ids = typeof query.id === "string" ? [query.id] : query.id;
    const removed = await hubOf(core).unsubscribe(auth.app.id, auth.tenantId, query.stream, ids);
    if (!Array.isArray(removed)) refusal(removed);
    if (removed.length === 0) throw fail("not_found", `No subscription ${ids[0]!.slice(0, 80)} on stream ${query.stream.slice(0, 80)}.`);
    return { removed };
  });
}
