import type { H3Event } from "h3";
import { errorResponse, fail } from "../errors.ts";
import { setReplyHeader } from "./reply-headers.ts";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { joinedHeader } from "./request-headers.ts";

const ALLOW_HEADERS = "authorization, content-type, x-service-key, x-service-app, idempotency-key";
const ALLOW_METHODS = "GET, POST, PUT, PATCH, DELETE, OPTIONS";
const EXPOSE_HEADERS = "retry-after, content-disposition, content-range, idempotent-replayed";

const allows = (app: AppRow, origin: string) => app.settings.corsOrigins.some((o) => o === "*" || o === origin);
const isPublicPath = (event: H3Event) => event.url.pathname.includes("/api/v1/public/");

/**
 * Per-app CORS. A preflight carries no app header, so it is allowed when any app lists the
 * origin; the real request then names its app and is refused with 403 unless that app lists
 * the origin, before any handler runs. Public reads (share links, files) allow every origin.
 *
 * Sets the allow headers as reply headers (reply-headers.ts) and answers the reply that ends the request
 * here (a preflight, a refused origin), or undefined to go on to the route.
 */
/**
 * CORS for a request whose app is known only inside the handler (a realtime ticket names
 * it): refused unless the app lists the origin, allowed otherwise.
 */
export function allowOriginFor(event: H3Event, app: AppRow): void {
  const origin = joinedHeader(event, "origin");
  if (!origin) return;
  if (!allows(app, origin)) throw fail("origin_not_allowed", `Origin ${origin} is not allowed for this app: add it to the app's corsOrigins setting.`);
  setReplyHeader(event, "access-control-allow-origin", origin);
  setReplyHeader(event, "access-control-expose-headers", EXPOSE_HEADERS);
}

export function corsCheck(core: Core): (event: H3Event) => Response | undefined | Promise<Response | undefined> {
  return (event) => {
    const origin = joinedHeader(event, "origin");
    return origin ? check(event, origin) : undefined;
  };

  async function check(event: H3Event, origin: string): Promise<Response | undefined> {
    setReplyHeader(event, "vary", "Origin");
    const preflight = event.req.method === "OPTIONS" && event.req.headers.has("access-control-request-method");

    if (isPublicPath(event)) {
      setReplyHeader(event, "access-control-allow-origin", "*");
      setReplyHeader(event, "access-control-expose-headers", EXPOSE_HEADERS);
      return preflight ? preflightResponse("*") : undefined;
    }
    if (preflight) {
      const apps = await core.db.apps.cached();
      if (!apps.some((app) => allows(app, origin))) {
        return errorResponse(403, "origin_not_allowed", `Origin ${origin} is not in any app's corsOrigins setting.`, { vary: "Origin" });
      }
      return preflightResponse(origin);
    }
    const key = joinedHeader(event, "x-service-key");
    const appId = joinedHeader(event, "x-service-app");
    const app = key ? await core.db.apps.findByKey(key) : appId ? await core.db.apps.findById(appId) : undefined;
    if (app) {
      if (!allows(app, origin)) {
        return errorResponse(403, "origin_not_allowed", `Origin ${origin} is not allowed for this app: add it to the app's corsOrigins setting.`, { vary: "Origin" });
      }
      setReplyHeader(event, "access-control-allow-origin", origin);
      setReplyHeader(event, "access-control-expose-headers", EXPOSE_HEADERS);
    }
    return undefined;
  }
}

function preflightResponse(origin: string): Response {
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": ALLOW_METHODS,
      "access-control-allow-headers": ALLOW_HEADERS,
      "access-control-max-age": "600",
      vary: "Origin",
    },
  });
}
