import type { H3, H3Event } from "h3";

/**
 * Route matches kept per method and path. A route with a parameter (`/api/v1/data/:collection`,
 * `/api/v1/billing/usage/:feature/increment`) is found by splitting the path into segments and
 * walking rou3's tree on every request: 2–2.4 µs of a usage increment's 50 under the bench's
 * load (docs/performance.md, twentieth round), where a kept match costs two map lookups.
 * Paths that repeat (a collection's list, a counter, a record polled) hit; a path seen once
 * (one record among millions) costs the lookup it always did plus an entry that ages out.
 */
export const ROUTE_CACHE_SIZE = 2048;

/** Longer paths are matched every time: the cache holds at most 2,048 × 256 characters of them. */
const LONGEST_KEPT_PATH = 256;

interface Match {
  data: unknown;
  params?: Record<string, string>;
}

// h3 2's routing hooks on the app: `~findRoute` answers each request, `~addRoute` registers.
interface Routing {
  "~findRoute"(event: H3Event): Match | undefined;
  "~addRoute"(route: unknown): void;
}

/**
 * Makes `app` remember its route matches. Past `size` the cache starts empty again: the paths
 * that repeat are back after one request each, and a stream of paths seen once (a scan of
 * record ids, a crawler's 404s) never holds more than `size`. Each request gets its own copy
 * of the parameters; a route added later empties the cache. Whether the cache is on: false
 * when this h3 has no such hooks.
 */
export function cacheRouteMatches(app: H3, size = ROUTE_CACHE_SIZE): boolean {
  const routing = app as unknown as Routing;
  // Internal hooks: if an h3 release renames them, requests are routed as h3 does, uncached.
  if (typeof routing["~findRoute"] !== "function" || typeof routing["~addRoute"] !== "function") return false;
  const find = routing["~findRoute"].bind(app);
  const add = routing["~addRoute"].bind(app);
  // One map per method: the pathname, a fresh string each request, is hashed once, not joined first.
  const kept = new Map<string, Map<string, Match>>();
  let count = 0;

  routing["~addRoute"] = (route) => {
    kept.clear();
    count = 0;
    add(route);
  };
  routing["~findRoute"] = (event) => {
    const method = event.req.method;
    const path = event.url.pathname;
    let paths = kept.get(method);
    const hit = paths?.get(path);
    if (hit !== undefined) return hit.params === undefined ? { data: hit.data } : { data: hit.data, params: { ...hit.params } };
    const match = find(event);
    if (match === undefined || path.length > LONGEST_KEPT_PATH) return match;
    if (count >= size) {
      kept.clear();
      count = 0;
      paths = undefined;
    }
    if (!paths) kept.set(method, (paths = new Map()));
    paths.set(path, match.params === undefined ? { data: match.data } : { data: match.data, params: { ...match.params } });
    count++;
    return match;
  };
  return true;
}
