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
  const add = (method: Method) => (path: string, handler: EventHandler) => {
    app.on(method, path, handler);
    // HEAD answers as GET without the body (Node drops it): CDNs and link checkers use it.
    if (method === "GET") app.on("HEAD", path, handler);
    // Suffix match: when a host mounts tenantd under a prefix, pathnames carry it.
    const source = path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/\\\*\\\*$/, ".*").replace(/:[A-Za-z_]+/g, "[^/]+");
    known.push({ pattern: new RegExp(`${source}/?$`), method });
    paths.push({ method, path });
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
