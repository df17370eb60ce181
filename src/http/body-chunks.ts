import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";
import { bodyCutOff, bodyReadError, unreadNodeRequest } from "./body.ts";
import { bodyTimedOut, readChunk } from "./body-timeout.ts";
import { dropRest } from "./drop-rest.ts";

/** A request body read one chunk at a time, each wait bounded by the stall limit. */
export interface BodyChunks {
  /** The next chunk, or null once the body has ended; 408 `request_timeout` when none arrives in time. */
  next(): Promise<Uint8Array | null>;
  /**
   * After a refusal: reads and drops up to `limit` more bytes in the background (a client
   * still sending then reads the answer instead of a reset), then cuts the body off.
   */
  discard(limit: number): void;
}

/**
 * The body of the request as chunks, or null when it has none. Served by node:http, chunks
 * come straight from the Node request: the web stream over it (`Readable.toWeb`) copies
 * every chunk, so a 10 MB upload left 10 MB more garbage for the GC to find, times the
 * uploads in flight (docs/performance.md).
 */
export function requestBodyChunks(event: H3Event, idleMs: number): BodyChunks | null {
  const req = unreadNodeRequest(event);
  if (req && !("rawBody" in req)) return nodeBodyChunks(req, idleMs);
  const body = event.req.body;
  return body ? webBodyChunks(body, idleMs) : null;
}

function webBodyChunks(body: ReadableStream<Uint8Array>, idleMs: number): BodyChunks {
  const reader = body.getReader();
  return {
    async next() {
      const { done, value } = await readChunk(reader, idleMs);
      return done ? null : value;
    },
    discard(limit) {
      void (async () => {
        let dropped = 0;
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          dropped += value.byteLength;
          if (dropped > limit) break;
        }
        await reader.cancel();
      })().catch(() => {});
    },
  };
}

/**
 * Reads the Node request in paused mode: it is resumed only when the reader has taken what
 * arrived, so at most a chunk or two wait in memory and TCP holds the sender back.
 */
function nodeBodyChunks(req: IncomingMessage, idleMs: number): BodyChunks {
  const queue: Buffer[] = [];
  let ended = false;
  let failure: Error | null = null;
  let waiter: { wake: () => void; refuse: (e: Error) => void } | null = null;
  // One timer for the whole body, restarted on every wait (a new one per chunk costs more).
  let idle: NodeJS.Timeout | undefined;

  const wake = () => {
    const w = waiter;
    waiter = null;
    w?.wake();
  };
  const onData = (chunk: Buffer) => {
    queue.push(chunk);
    req.pause();
    wake();
  };
  const onEnd = () => {
    ended = true;
    wake();
  };
  const onError = (e: Error) => {
    failure ??= bodyReadError(e);
    wake();
  };
  // The client went away before the body ended.
  const onClose = () => {
    if (!ended) failure ??= bodyCutOff();
    wake();
  };
  const stop = () => {
    clearTimeout(idle);
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onError);
    req.off("close", onClose);
  };
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onError);
  req.on("close", onClose);
  req.resume();

  const arrival = () =>
    new Promise<void>((resolve, reject) => {
      waiter = { wake: resolve, refuse: reject };
      if (idle) idle.refresh();
      else
        idle = setTimeout(() => {
          const w = waiter;
          waiter = null;
          w?.refuse(bodyTimedOut(idleMs));
        }, idleMs);
    });

  return {
    async next() {
      for (;;) {
        const chunk = queue.shift();
        if (chunk) {
          if (queue.length === 0 && !ended) req.resume();
          return chunk;
        }
        if (failure) {
          stop();
          throw failure;
        }
        if (ended) {
          stop();
          return null;
        }
        await arrival();
      }
    },
    discard(limit) {
      stop();
      const queued = queue.reduce((n, c) => n + c.length, 0);
      queue.length = 0;
      dropRest(req, limit, idleMs, queued);
    },
  };
}
