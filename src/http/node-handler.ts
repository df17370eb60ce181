import type { IncomingMessage, ServerResponse } from "node:http";
import type { H3 } from "h3";
import { toNodeHandler as h3NodeHandler } from "h3/node";
import { errorBody } from "../errors.ts";
import type { Core } from "../core.ts";
import { checkMountPrefix, strippedPrefix } from "../embed/startup.ts";
import { BODY_READ_MESSAGE, bodyAsText, bodyWasRead } from "./host-body.ts";
import { ownsPath } from "./router.ts";

/** A `node:http` request handler that is also Express/Connect middleware (`next` optional). */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

/**
 * Wraps tenantd (or any h3 app) for `node:http`, Express and Connect (Fastify: `toFastifyHook`).
 * Used as middleware (called with `next`), a request tenantd has no route for goes on to
 * the host's own routes: tenantd answers `/api/v1/**` and its other routes, nothing else.
 */
export function toNodeHandler(app: H3): NodeHandler {
  const handle = h3NodeHandler(app);
  // A plain h3 app has no logger or config; tenantd's backend does.
  const core = (app as { core?: Core }).core;
  const log = core?.log;
  return async (req, res, next) => {
    if (next && !ownsPath(app, pathnameOf(req.url))) {
      next();
      return;
    }
    // Express under a path (app.use("/backend", …)) keeps the whole path in originalUrl.
    const originalUrl = (req as { originalUrl?: string }).originalUrl;
    if (core && originalUrl !== undefined) checkMountPrefix(core, strippedPrefix(pathnameOf(originalUrl), pathnameOf(req.url)));
    // A host parser read a body tenantd cannot use (anything but JSON for a JSON endpoint,
    // e.g. an upload): say how to fix it here, since the error middleware would hide a 500
    // behind a generic message.
    if (bodyWasRead(req) && hasBody(req) && !(isJson(req) && bodyAsText((req as { body?: unknown }).body) !== undefined)) {
      // The host's operator reads the log, not the client's 500: say it there too.
      log?.error(`${req.method} ${pathnameOf(req.url)}: ${BODY_READ_MESSAGE}`, { contentType: req.headers["content-type"] ?? null });
      const body = errorBody("internal_error", BODY_READ_MESSAGE);
      res.writeHead(500, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) }).end(body);
      return;
    }
    await handle(req, res);
  };
}

const isJson = (req: IncomingMessage) => /^application\/json\s*(;|$)/i.test(req.headers["content-type"] ?? "");
const hasBody = (req: IncomingMessage) => req.headers["content-length"] !== "0" && (req.headers["content-length"] !== undefined || req.headers["transfer-encoding"] !== undefined);

function pathnameOf(url: string | undefined): string {
  const path = (url ?? "/").split("?")[0]!;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * Fastify's `onRequest` hook for tenantd: `fastify.addHook("onRequest", toFastifyHook(backend))`.
 * It runs before Fastify parses the body (its parsers would refuse uploads and read the JSON
 * tenantd limits itself); tenantd's paths are taken out of Fastify's hands (`reply.hijack()`),
 * every other request goes on to the app's own routes.
 */
export function toFastifyHook(app: H3): (request: { raw: IncomingMessage }, reply: { raw: ServerResponse; hijack(): unknown }, done: (error?: Error) => void) => void {
  const handle = toNodeHandler(app);
  return (request, reply, done) => {
    if (!ownsPath(app, pathnameOf(request.raw.url))) return done();
    reply.hijack();
    void handle(request.raw, reply.raw);
  };
}
