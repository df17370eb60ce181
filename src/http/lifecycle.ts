import { randomUUID } from "node:crypto";
import { rememberAccess } from "../admin/access-log.ts";
import { toResponse, type EventHandler, type H3Event, type Middleware } from "h3";
import { asHttpError, errorResponse, errorToResponse } from "../errors.ts";
import { corsCheck } from "./cors.ts";
import { setBodyIdleMs } from "./body-timeout.ts";
import { carryRequestId, LOG_OFF, withRequestId } from "../log.ts";
import { plainJsonReply } from "./json-reply.ts";
import { isThenable } from "../awaitable.ts";
import { replyHeadersOf } from "./reply-headers.ts";
import type { Core } from "../core.ts";
import { joinedHeader, nodeRequest } from "./request-headers.ts";
import { closesAfterReply, dropLeftover, lingerBeforeClose } from "./drop-rest.ts";
import { DROP_AFTER_REFUSAL_BYTES } from "./body.ts";

/** Where the server is in its life: the ready probe and the drain read it. */
export interface Lifecycle {
  readonly state: "starting" | "serving" | "draining" | "stopped";
  /** Requests being handled now. */
  readonly inFlight: number;
  ready(): void;
  /** Refuses new requests (503 + `connection: close`) and resolves when none is in flight or the timeout passes. */
  drain(timeoutMs: number): Promise<{ timedOut: boolean; inFlight: number }>;
  stopped(): void;
}

export function createLifecycle(): Lifecycle {
  let state: Lifecycle["state"] = "starting";
  let inFlight = 0;
  let onIdle: (() => void) | undefined;
  return {
    get state() {
      return state;
    },
    get inFlight() {
      return inFlight;
    },
    ready: () => void (state = state === "starting" ? "serving" : state),
    stopped: () => void (state = "stopped"),
    begin: () => void inFlight++,
    end() {
      inFlight--;
      if (inFlight === 0) onIdle?.();
    },
    async drain(timeoutMs) {
      state = "draining";
      if (inFlight === 0) return { timedOut: false, inFlight: 0 };
      let timer: NodeJS.Timeout | undefined;
      const timedOut = await new Promise<boolean>((resolve) => {
        onIdle = () => resolve(false);
        timer = setTimeout(() => resolve(true), timeoutMs);
      });
      clearTimeout(timer);
      onIdle = undefined;
      return { timedOut, inFlight };
    },
  } as Lifecycle & { begin(): void; end(): void };
}

function addHeaders(response: Response, event: H3Event, requestId: string): void {
  if (!response.headers.has("x-request-id")) response.headers.set("x-request-id", requestId);
  const extra = replyHeadersOf(event);
  if (extra) for (const [name, value] of Object.entries(extra)) response.headers.set(name, value);
}

/**
 * Marks a route whose handler writes no log line of its own (the hot bearer reads and record
 * writes): its request id reaches the access log and an error's line without
 * AsyncLocalStorage (src/log.ts), so on Node 20 it runs no async hooks. A handler that logs,
 * or calls code that does, must not be marked.
 */
export function quiet<H extends EventHandler>(handler: H): H {
  const marked = handler as H & { meta?: Record<string, unknown> };
  marked.meta = { ...marked.meta, quiet: true };
  return handler;
}

/**
 * The request's id, for a quiet route that writes a line after an await (where neither
 * AsyncLocalStorage nor the synchronous variable carries it): pass it as the line's `requestId`.
 */
export const requestIdOf = (event: H3Event): string | undefined => (event.context as { requestId?: string }).requestId;

const isQuiet = (event: H3Event) => (event.context.matchedRoute as { meta?: { quiet?: boolean } } | undefined)?.meta?.quiet === true;

/** An `x-request-id` we accept from a client or proxy: short, printable, no spaces. */
const REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

function appIdOf(event: H3Event): string | undefined {
  const ctx = event.context as { appId?: string; params?: Record<string, string> };
  return ctx.appId ?? joinedHeader(event, "x-service-app") ?? ctx.params?.appId ?? undefined;
}

/**
 * tenantd's one middleware, outermost: gives every request an id (the caller's
 * `x-request-id` when it is sane, else a new one), echoes it, carries it into every log line
 * of the request, counts the request for the drain, refuses new work while draining, checks
 * CORS, turns every error into `{ error, message }`, and writes the access log.
 *
 * One layer rather than one per concern: each async middleware layer cost a few
 * microseconds of every request, a measurable share of the cheapest endpoints. A middleware
 * (not app hooks) so all of it still runs when a host app mounts tenantd.
 */
export function defineRequestMiddleware(core: Core, lifecycle: Lifecycle): Middleware {
  const counter = lifecycle as Lifecycle & { begin(): void; end(): void };
  const cors = corsCheck(core);
  const idleMs = core.config.bodyIdleTimeoutSeconds * 1000;

  /** The reply to the handler's value: the JSON shortcut, else h3's rendering; an error becomes `{ error, message }`. */
  function render(event: H3Event, value: unknown, requestId: string, started: number): Response | Promise<Response> {
    let plain: Response | undefined;
    let response: Response | Promise<Response>;
    try {
      plain = plainJsonReply(event, value, requestId);
      response = plain ?? toResponse(value, event);
    } catch (error) {
      return failed(event, error, requestId, started);
    }
    if (!isThenable(response)) return finish(event, response, response === plain, requestId, started);
    return response.then(
      (r) => finish(event, r, r === plain, requestId, started),
      (error) => failed(event, error, requestId, started),
    );
  }

  function failed(event: H3Event, error: unknown, requestId: string, started: number): Response {
    let response: Response;
    try {
      // The id given here: a quiet route's error may come after an await.
      response = withRequestId(requestId, () => errorToResponse(asHttpError(error), event, core.log));
    } catch (again) {
      counter.end();
      throw again;
    }
    return finish(event, response, false, requestId, started);
  }

  /**
   * The body as the reply leaves it: what a stopped reader left is dropped (dropLeftover),
   * and a reply that ends the connection while the body may still be coming closes it
   * gently (lingerBeforeClose), so a client still writing reads it. Not after a 408: that
   * body stalled for the whole idle time already.
   */
  function settleBody(event: H3Event, status: number, replyCloses = false): void {
    const req = nodeRequest(event);
    if (!req || req.readableEnded) return;
    dropLeftover(req, DROP_AFTER_REFUSAL_BYTES, idleMs);
    if (status !== 408 && (replyCloses || closesAfterReply(req))) lingerBeforeClose(req, DROP_AFTER_REFUSAL_BYTES, idleMs);
  }

  /** Headers, access log and the drain count: the last step of every request, reply or error. */
  function finish(event: H3Event, reply: Response, plain: boolean, requestId: string, started: number): Response {
    let response = reply;
    try {
      settleBody(event, response.status);
      // Every other reply (h3's, a handler's own Response, an error) gets the id and the reply headers here.
      if (!plain) {
        try {
          addHeaders(response, event, requestId);
        } catch {
          // Immutable headers (a Response from fetch): the same reply, in a Response that takes them.
          response = new Response(response.body, response);
          addHeaders(response, event, requestId);
        }
      }
      const appId = appIdOf(event);
      // The dashboard's Logs page: the app's recent requests (src/admin/access-log.ts).
      if (appId) rememberAccess(core, appId, { at: core.clock(), method: event.req.method, route: (event.context.matchedRoute as { route?: string } | undefined)?.route ?? "(no route)", status: response.status, ms: Math.round((performance.now() - started) * 10) / 10, requestId });
      if (core.config.accessLog) {
        const route = (event.context.matchedRoute as { route?: string } | undefined)?.route;
        // Probes come every few seconds: their lines are debug, so they do not drown the rest.
        const line = route?.startsWith("/api/v1/health") ? core.log.debug : core.log.info;
        if (line && line !== LOG_OFF) line.call(core.log, "request", {
          method: event.req.method,
          route: route === "/**" ? "(no route)" : route ?? "(no route)",
          status: response.status,
          ms: Math.round((performance.now() - started) * 10) / 10,
          appId: appIdOf(event),
          requestId,
        });
      }
      return response;
    } finally {
      counter.end();
    }
  }

  /**
   * Synchronous while the handler is: a handler that answers at once (the bearer guard and
   * SQLite's reads are synchronous, src/awaitable.ts) gets its reply without a promise, and
   * on Node 20 every promise of a request also runs AsyncLocalStorage's hooks.
   */
  function handle(event: H3Event, next: () => unknown, requestId: string, started: number): Response | Promise<Response> {
    let checked: Response | undefined | Promise<Response | undefined>;
    try {
      setBodyIdleMs(event, idleMs);
      checked = cors(event);
    } catch (error) {
      return failed(event, error, requestId, started);
    }
    if (!isThenable(checked)) return checked ? finish(event, checked, false, requestId, started) : proceed(event, next, requestId, started);
    return checked.then(
      (ended) => (ended ? finish(event, ended, false, requestId, started) : proceed(event, next, requestId, started)),
      (error) => failed(event, error, requestId, started),
    );
  }

  function proceed(event: H3Event, next: () => unknown, requestId: string, started: number): Response | Promise<Response> {
    let value: unknown;
    try {
      value = next();
    } catch (error) {
      return failed(event, error, requestId, started);
    }
    if (!isThenable(value)) return render(event, value, requestId, started);
    return (value as Promise<unknown>).then(
      (v) => render(event, v, requestId, started),
      (error) => failed(event, error, requestId, started),
    );
  }

  // Not async itself: a reply that is ready goes back as it is, a pending one as handle()'s own promise.
  return (event, next) => {
    const given = joinedHeader(event, "x-request-id");
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    if (lifecycle.state === "draining" || lifecycle.state === "stopped") {
      settleBody(event, 503, true);
      return errorResponse(503, "unavailable", "The server is shutting down; send the request again (to another instance, or once it is back).", {
        connection: "close",
        "retry-after": "5",
        "x-request-id": requestId,
      });
    }
    counter.begin();
    (event.context as { requestId?: string }).requestId = requestId;
    const started = performance.now();
    // handle() ends the count, whatever happens in it.
    const run = () => handle(event, next, requestId, started);
    return isQuiet(event) ? withRequestId(requestId, run) : carryRequestId(requestId, run);
  };
}
