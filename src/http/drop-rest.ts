import type { IncomingMessage } from "node:http";
import { Socket } from "node:net";

/** Marks a request whose body is being dropped, so a second dropRest on it adds no second reader. */
const DROPPING = Symbol("tenantd.dropping");

/**
 * After a refusal, reads and drops up to `limit` more bytes of the request body, then cuts the
 * request off; a body that stalls for `idleMs` is cut off too. Closing at once instead resets
 * the connection under a client that is still writing, and Node's client (browsers too) then
 * reports EPIPE or ECONNRESET instead of the answer. A body that ends within the bound leaves
 * the connection usable for the next request.
 */
export function dropRest(req: IncomingMessage, limit: number, idleMs: number, alreadyDropped = 0): void {
  const marked = req as IncomingMessage & { [DROPPING]?: true };
  if (req.readableEnded || req.destroyed || marked[DROPPING]) return;
  marked[DROPPING] = true;
  let dropped = alreadyDropped;
  const idle = setTimeout(() => req.destroy(), idleMs).unref();
  const settled = () => clearTimeout(idle);
  const drop = (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > limit) {
      req.off("data", drop);
      settled();
      req.destroy();
      return;
    }
    idle.refresh();
    // One chunk per turn of the event loop: the answer goes out while the client is still
    // sending, instead of the bound being read off at full speed before it does.
    req.pause();
    setImmediate(() => req.resume());
  };
  req.on("data", drop);
  req.once("end", settled);
  req.once("close", settled);
  req.on("error", () => {});
  req.resume();
}

/**
 * After the reply: whatever of the body no one read is dropped like a refused body. A
 * reader stopped part-way (a refusal before or while reading, e.g. an upload's 415 once its
 * reader had started) pauses the request at its next chunk; Node then stops reading the
 * socket, the connection's next request is never read, and the keep-alive timeout resets
 * the connection under it (read ECONNRESET); a body parsed whole but left in the request's
 * buffer holds the socket the same way. The stopped reader's listener goes: it would pause
 * the request again, and keep what arrives.
 */
export function dropLeftover(req: IncomingMessage, limit: number, idleMs: number): void {
  // All of it parsed and nothing left in the request's buffer: read to its end.
  if ((req.complete && req.readableLength === 0) || (req as { [DROPPING]?: true })[DROPPING] || !hasBody(req)) return;
  req.removeAllListeners("data");
  dropRest(req, limit, idleMs);
}

/** A request that declares a body (a handler runs before Node has parsed a GET to its end). */
function hasBody(req: IncomingMessage): boolean {
  const length = req.headers["content-length"];
  return length !== undefined ? length !== "0" : req.headers["transfer-encoding"] !== undefined;
}

/** Whether Node closes the connection after this request's reply: the client asked (`connection: close`, HTTP/1.0). */
export function closesAfterReply(req: IncomingMessage): boolean {
  const connection = req.headers.connection;
  return req.httpVersionMinor === 0 || (connection !== undefined && /(^|[\s,])close([\s,]|$)/i.test(connection));
}

/**
 * Makes the close that follows a connection's last reply a lingering one, when the request's
 * body may still be arriving. Node closes such a connection by destroying the socket as soon
 * as the reply is written; with body bytes not yet read, the kernel sends a reset instead of
 * a FIN, and a client still writing its body fails its next write with EPIPE or ECONNRESET
 * before it reads the reply (a refusal that did not wait for the body: 401, 413, 415). Here
 * the reply and a FIN go out, the rest of the body is read and dropped (dropRest's bounds),
 * and the socket is closed once the body has ended.
 *
 * Node closes through `socket.destroySoon()` (node:_http_server, resOnFinish): this puts a
 * lingering one on the socket for this request's reply; should Node stop calling it, the
 * close is as before, and the refusal test under load (security-refusals) says so.
 */
export function lingerBeforeClose(req: IncomingMessage, limit: number, idleMs: number): void {
  const socket = req.socket as Socket & { destroySoon?: () => void };
  if (req.complete || !socket || socket.destroyed) return;
  socket.destroySoon = function lingeringClose(this: Socket) {
    delete (this as { destroySoon?: unknown }).destroySoon;
    if (req.complete || this.destroyed) return Socket.prototype.destroySoon.call(this);
    this.end();
    const close = () => (this.writableFinished ? this.destroy() : this.once("finish", () => this.destroy()));
    req.once("end", close);
    dropRest(req, limit, idleMs);
  };
}
