import type { H3Event } from "h3";
import { fail } from "../errors.ts";

const timedOut = (ms: number) =>
  fail("request_timeout", `The request body stalled: nothing arrived for ${Math.round(ms / 1000)} seconds. Send it again.`, { connection: "close" });

/**
 * The next chunk of a body, or 408 `request_timeout` when none arrives within `idleMs`: a
 * client trickling a byte now and then cannot hold a request (and what it holds) open.
 */
export async function readChunk(reader: ReadableStreamDefaultReader<Uint8Array>, idleMs: number): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(timedOut(idleMs)), idleMs);
  });
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    clearTimeout(timer);
  }
}

export { timedOut as bodyTimedOut };

const IDLE_KEY = "tenantdBodyIdleMs";

/** Tells the body readers of this request how long its body may stall (the server's `bodyIdleTimeoutSeconds`). */
export function setBodyIdleMs(event: H3Event, idleMs: number): void {
  event.context[IDLE_KEY] = idleMs;
}

/** The stall limit for this request's body (30 s when tenantd's middleware did not run). */
export function bodyIdleMs(event: H3Event): number {
  const ms = event.context[IDLE_KEY];
  return typeof ms === "number" ? ms : 30_000;
}
