import { H3Event } from "h3";
import { FastResponse } from "srvx";
import { JSON_CONTENT_TYPE, JsonText } from "./json-text.ts";
import { replyHeadersOf } from "./reply-headers.ts";

/**
 * Where h3 keeps what a handler put on `event.res` (status, headers). h3 creates it on the
 * first use of `event.res`, so an event without it is one whose handler set neither. The
 * symbols are registered (`Symbol.for`), not exported; `SHORTCUT` checks them against the
 * installed h3 once, and a different h3 turns the shortcut off instead of losing headers.
 */
const kEventRes = Symbol.for("h3.internal.event.res");
const kEventResHeaders = Symbol.for("h3.internal.event.res.headers");
const kEventResErrHeaders = Symbol.for("h3.internal.event.res.err.headers");

const SHORTCUT = (() => {
  const event = new H3Event(new Request("http://localhost/"));
  if (kEventRes in event) return false;
  const res = event.res;
  if (!(kEventRes in event) || kEventResHeaders in res || kEventResErrHeaders in res) return false;
  void res.headers;
  void res.errHeaders;
  return kEventResHeaders in res && kEventResErrHeaders in res;
})();

type EventResponseState = { status?: number; statusText?: string };

/**
 * The reply to a handler that returned a plain object or array, or JSON text (`jsonText`),
 * and set no header on `event.res` (a status alone is fine): the JSON h3 would send, with
 * the request id and the request's reply headers (reply-headers.ts), built without a
 * `Headers` object. h3's own path copies headers through three of them (the event's, the
 * merge, the id check), which cost about a tenth of a cheap request's CPU. `undefined` for
 * anything else: h3 renders it.
 */
export function plainJsonReply(event: H3Event, value: unknown, requestId: string): Response | undefined {
  if (!SHORTCUT || value === null || typeof value !== "object" || event.req.method === "HEAD") return undefined;
  const text = value instanceof JsonText ? value.body : isPlain(value) ? undefined : null;
  if (text === null) return undefined;
  const res = (event as unknown as Record<symbol, EventResponseState | undefined>)[kEventRes];
  if (res && (kEventResHeaders in res || kEventResErrHeaders in res || res.statusText)) return undefined;
  const status = res?.status;
  // Statuses whose reply has no body (204, 304…) go through h3, which drops it.
  if (status !== undefined && (status < 200 || status > 299 || status === 204 || status === 205)) return undefined;
  const headers: Record<string, string> = { "content-type": JSON_CONTENT_TYPE, "x-request-id": requestId };
  const extra = replyHeadersOf(event);
  if (extra) Object.assign(headers, extra);
  return new FastResponse(text ?? JSON.stringify(value), { status, headers });
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null || Array.isArray(value);
}
