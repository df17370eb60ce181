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
  const req = (event.runtime?.node as { req?: IncomingMessage } | undefined)?.req;
  if (!req) return event.req.headers.get(name);
  const value = req.headers[name];
  return typeof value === "string" ? value : value === undefined ? null : event.req.headers.get(name);
}
