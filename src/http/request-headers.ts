import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";

/**
 * Headers Node joins the way the Fetch standard does (`, ` between repeats): any name outside
 * Node's short list of single-value headers (authorization, content-type, content-length, …,
 * whose repeats it drops, so those go through srvx, which rebuilds the Fetch answer).
 */
export type JoinedHeader = "origin" | "x-request-id" | "x-service-app" | "x-service-key";

/**
 * A request header read from Node's own header object when the request came through
 * node:http, else from the Request: the same value either way. srvx's Headers.get lower-cases
 * the name and tests an absent one against the header-name pattern on every call, and the
 * hot paths read four of these per request.
 */
export function joinedHeader(event: H3Event, name: JoinedHeader): string | null {
  const req = nodeRequest(event);
  if (!req) return event.req.headers.get(name);
  const value = req.headers[name];
  return typeof value === "string" ? value : value === undefined ? null : event.req.headers.get(name);
}

/** Single-value headers the hot paths read (`authorization` on every tenant request, the body's two). */
export type SingleHeader = "authorization" | "content-length" | "content-type";

/**
 * A single-value request header, read from Node's header object like `joinedHeader`. Node
 * keeps the first of a repeated one where the Fetch standard joins them ("Bearer a, Bearer
 * b" is no token): a request that repeats any header name is read through srvx, which
 * scans the raw headers for repeats on every call.
 */
export function singleHeader(event: H3Event, name: SingleHeader): string | null {
  const req = nodeRequest(event);
  if (!req) return event.req.headers.get(name);
  const value = req.headers[name];
  if (value === undefined) return null;
  // Node refuses a repeated content-length with 400 before any handler runs.
  if (name === "content-length") return value;
  return namesRepeat(req) ? event.req.headers.get(name) : value;
}

/** Whether the request repeats a header name: Node's header object then has fewer names than it was sent. */
function namesRepeat(req: IncomingMessage): boolean {
  // Counted, not Object.keys: that allocates an array on every read.
  let names = 0;
  for (const _ in req.headers) names++;
  return names * 2 !== req.rawHeaders.length;
}

/** The Node request under h3's web Request when served by node:http; undefined on other hosts. */
export const nodeRequest = (event: H3Event): IncomingMessage | undefined => (event.runtime?.node as { req?: IncomingMessage } | undefined)?.req;
