import type { H3, EventHandler } from "h3";
import { fail } from "../errors.ts";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

export interface Router {
  get(path: string, handler: EventHandler): Router;
  post(path: string, handler: EventHandler): Router;
  put(path: string, handler: EventHandler): Router;
  patch(path: string, handler: EventHandler): Router;
  delete(path: string, handler: EventHandler): Router;
}

/** Every route registered on an app, in registration order: the OpenAPI document is checked against it. */
const registered = new WeakMap<H3, { method: Method; path: string }[]>();
export const registeredRoutes = (app: H3): readonly { method: Method; path: string }[] => registered.get(app) ?? [];

/**
 * Registers routes on the h3 app and remembers their paths, so that a request to a known
 * path with another method is 405 (with `allow`) and anything else is a JSON 404.
 */
export function createRouter(app: H3) {
  const known: { pattern: RegExp; method: Method }[] = [];
  const paths: { method: Method; path: string }[] = [];
  registered.set(app, paths);
  const owned: RegExp[] = [];
  ownedRoutes.set(app, owned);
  const add = (method: Method) => (path: string, handler: EventHandler) => {
    app.on(method, path, handler);
    // HEAD answers as GET without the body (Node drops it): CDNs and link checkers use it.
    if (method === "GET") app.on("HEAD", path, handler);
    // Suffix match: when a host mounts tenantd under a prefix, pathnames carry it.
    const source = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\\*\\\*$/, ".*").replace(/:[A-Za-z_]+/g, "[^/]+");
    paths.push({ method, path });
    // "/" as a suffix would match every path ending in a slash: the root is matched whole.
    known.push({ pattern: path === "/" ? /^\/?$/ : new RegExp(`${source}/?$`), method });
    if (path !== "/") owned.push(new RegExp(`^${source}/?$`));
    return router;
  };
  const router: Router = { get: add("GET"), post: add("POST"), put: add("PUT"), patch: add("PATCH"), delete: add("DELETE") };

  /** Call once, after every route: the JSON 404/405 fallback. */
  function finish() {
    app.all("/**", (event) => {
      const methods = [...new Set(known.filter((k) => k.pattern.test(event.url.pathname)).map((k) => k.method))];
      if (methods.includes("GET")) methods.push("HEAD" as Method);
      if (methods.length > 0 && !methods.includes(event.req.method as Method)) {
        throw fail("method_not_allowed", `${event.req.method} is not allowed here. Allowed: ${methods.join(", ")}.`, { allow: methods.join(", ") });
      }
      throw fail("not_found", `No route for ${event.req.method} ${event.url.pathname}.`);
    });
  }
  return { router, finish };
}

const ownedRoutes = new WeakMap<H3, RegExp[]>();

/**
 * Whether tenantd answers this path when a host hands it only what it owns (Express
 * middleware): everything under `/api/v1` (unknown paths there get tenantd's JSON 404) and
 * any other registered route. `/` stays the host's. An app not built by createRouter owns all.
 */
export function ownsPath(app: H3, pathname: string): boolean {
  const owned = ownedRoutes.get(app);
  if (!owned) return true;
  return pathname === "/api/v1" || pathname.startsWith("/api/v1/") || owned.some((p) => p.test(pathname));
}
