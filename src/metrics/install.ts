import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash, timingSafeEqual } from "node:crypto";
import type { H3, Middleware } from "h3";
import type { Core } from "../core.ts";
import type { Lifecycle } from "../http/lifecycle.ts";
import { errorResponse } from "../errors.ts";
import { isThenable } from "../awaitable.ts";
import { timedRepositories } from "./db-timing.ts";
import type { Metrics } from "./registry.ts";

/** Where a backend's metrics are served, when they are on. */
export interface MetricsEndpoint {
  /** The full URL of `/metrics`: on the listener of its own, or the path on the main port. */
  url: string;
}

const digest = (text: string) => createHash("sha256").update(text).digest();

/** The bearer token, compared in constant time (digests of equal length). */
function tokenMatches(headers: Headers, token: string): boolean {
  const given = /^Bearer (\S+)$/i.exec(headers.get("authorization") ?? "")?.[1];
  return given !== undefined && timingSafeEqual(digest(given), digest(token));
}

/** `GET /metrics`: the exposition text, or 401 without the right token (when one is set). */
async function metricsReply(metrics: Metrics, token: string | undefined, headers: Headers): Promise<Response> {
  if (token !== undefined && !tokenMatches(headers, token)) {
    return errorResponse(401, "unauthorized", "GET /metrics needs the metrics token: authorization: Bearer <metrics.token>.", { "www-authenticate": 'Bearer realm="metrics"' });
  }
  const { contentType, body } = await metrics.render();
  return new Response(body, { headers: { "content-type": contentType, "cache-control": "no-store" } });
}

/**
 * Outermost middleware: times every request to its response and counts it by route pattern
 * (h3's matched route, never the raw path, so ids add no label values) and status.
 */
function timeRequests(metrics: Metrics): Middleware {
  return (event, next) => {
    const started = performance.now();
    const record = (value: unknown) => {
      const route = (event.context.matchedRoute as { route?: string } | undefined)?.route;
      const status = value instanceof Response ? value.status : 200;
      metrics.request(event.req.method, route === undefined || route === "/**" ? "(no route)" : route, status, (performance.now() - started) / 1000);
      return value;
    };
    const value = next();
    return isThenable(value) ? Promise.resolve(value).then(record) : record(value);
  };
}

/** A listener of its own for `/metrics` (metrics.port), closed with the core. */
async function listen(core: Core, metrics: Metrics, token: string | undefined, at: { port: number; host: string }): Promise<string> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (response: Response) =>
      void response.text().then((text) => {
        res.writeHead(response.status, Object.fromEntries(response.headers));
        res.end(text);
      });
    if (path !== "/metrics" || (req.method !== "GET" && req.method !== "HEAD")) {
      return send(errorResponse(404, "not_found", "This listener serves GET /metrics only."));
    }
    const headers = new Headers(req.headers.authorization ? { authorization: req.headers.authorization } : {});
    metricsReply(metrics, token, headers).then(send, (error: unknown) => {
      core.log.error("metrics: could not render", { error: error as Error });
      send(errorResponse(500, "internal_error", "The metrics could not be rendered."));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(at.port, at.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  core.onClose(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { address, port } = server.address() as AddressInfo;
  const url = `http://${address.includes(":") ? `[${address}]` : address}:${port}/metrics`;
  core.log.info("metrics listening", { url });
  return url;
}

/**
 * Turns the metrics on, if the config asks for them: request timing (one middleware, in
 * front of tenantd's own), database timing, the areas' counters, and `GET /metrics` on the
 * main app (with the token) or on a listener of its own. With metrics off nothing here runs
 * and prom-client is never loaded.
 */
export async function installMetrics(h3: H3, core: Core, lifecycle: Lifecycle): Promise<MetricsEndpoint | undefined> {
  const option = core.config.metrics;
  if (!option) return undefined;
  const { createMetrics } = await import("./registry.ts");
  const metrics = createMetrics(core, lifecycle);
  core.metrics = metrics.sink;
  core.db = timedRepositories(core.db, metrics.dbOperation, metrics.dbInFlight);
  h3.use(timeRequests(metrics));
  if (option.listen) return { url: await listen(core, metrics, option.token, option.listen) };
  h3.get("/metrics", (event) => metricsReply(metrics, option.token, event.req.headers));
  return { url: `${core.config.publicUrl}/metrics` };
}
