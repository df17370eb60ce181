import type { IncomingMessage } from "node:http";

/**
 * After a refusal, reads and drops up to `limit` more bytes of the request body, then cuts the
 * request off; a body that stalls for `idleMs` is cut off too. Closing at once instead resets
 * the connection under a client that is still writing, and Node's client (browsers too) then
 * reports EPIPE or ECONNRESET instead of the answer. A body that ends within the bound leaves
 * the connection usable for the next request.
 */
export function dropRest(req: IncomingMessage, limit: number, idleMs: number, alreadyDropped = 0): void {
  if (req.readableEnded || req.destroyed) return;
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
