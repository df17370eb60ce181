import { getRequestIP, getRouterParam, type H3, type H3Event } from "h3";
import type { Core } from "../core.ts";
import { fail } from "../errors.ts";
import { dashboardSession } from "./session.ts";
import { requireCsrf, secureHeaders } from "./security.ts";
import { resolveClientAddress } from "../http/trust-proxy.ts";

// The dashboard reaches the developer's own admin API and nothing else (no tenant routes,
// no sign-in or sign-out of the bearer API: the dashboard has its own session routes).
const ALLOWED = /^(admin\/|developer\/(me|usage)$)/;
const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * `<path>/api/<rest>` → `/api/v1/<rest>` on this same server, with the cookie session's
 * token as the bearer. The admin API then applies its own isolation (another developer's app
 * is a 404) exactly as for any other client.
 */
export async function forwardToAdminApi(h3: H3, core: Core, event: H3Event): Promise<Response> {
  // The route's own wildcard: anchored at this dashboard's `<path>/api/`, never at a later one in the path.
  const rest = getRouterParam(event, "_") ?? "";
  if (!ALLOWED.test(rest)) throw fail("not_found", `The dashboard forwards only admin API paths (admin/…), not ${rest}.`);
  const session = await dashboardSession(event, core);
  if (!session) throw fail("unauthorized", "You are signed out of the dashboard (or the session expired): sign in again.");
  const method = event.req.method;
  if (!SAFE_METHODS.has(method)) requireCsrf(event, core, session.tokenHash);

  const headers = new Headers({ authorization: `Bearer ${session.token}` });
  // last-event-id: an EventSource reconnecting to a live view resumes where it left off.
  // user-agent: the audit trail names the developer's browser.
  for (const name of ["content-type", "content-length", "accept", "last-event-id", "user-agent"]) {
    const value = event.req.headers.get(name);
    if (value !== null) headers.set(name, value);
  }
  const hasBody = !SAFE_METHODS.has(method) && event.req.body !== null;
  const request = new Request(new URL(`/api/v1/${rest}${event.url.search}`, event.url.origin), {
    method,
    headers,
    body: hasBody ? event.req.body : undefined,
    ...(hasBody ? { duplex: "half" } : {}),
  } as RequestInit);
  // The client's address goes along, resolved through the operator's trusted proxies (the
  // forwarded request carries no x-forwarded-for), so the admin API counts and audits this
  // client, not "unknown" nor the proxy in front that every developer shares.
  const clientAddress = resolveClientAddress(getRequestIP(event), event.req.headers.get("x-forwarded-for"), core.config.trustProxy);
  const answer = await h3.request(request, undefined, { clientAddress });
  const out = new Headers(answer.headers);
  out.set("cache-control", "no-store");
  secureHeaders(out);
  return new Response(answer.body, { status: answer.status, headers: out });
}
