import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { RefusedTargetError, vetHost, type VettedTarget } from "./address-guard.ts";

export interface SendResult {
  ok: boolean;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

// The connection goes to the address the guard vetted, whatever DNS says a moment later;
// Host and TLS SNI still carry the URL's host name.
function pinnedLookup(target: VettedTarget): LookupFunction {
  return ((_host: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
}

/**
 * One POST, no retry, no redirect followed. The whole attempt (DNS, connect, TLS, the
 * receiver's answer) has `timeoutMs`. As the spec's delivery contract says, only a status of
 * 400 or more is a failure: a 3xx is recorded as delivered, and never followed elsewhere.
 */
export async function postOnce(
  rawUrl: string,
  body: Buffer,
  headers: Record<string, string>,
  opts: { timeoutMs: number; allowInsecure: boolean },
): Promise<SendResult> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const done = (statusCode: number | null, error: string | null): SendResult => ({
    ok: error === null,
    statusCode,
    error,
    durationMs: took(),
  });
  let timer: NodeJS.Timeout | undefined;
  let socketClosed: Promise<void> = Promise.resolve();
  try {
    const url = new URL(rawUrl);
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timeout: no answer within ${opts.timeoutMs} ms`)), opts.timeoutMs);
    });
    const target = await Promise.race([vetHost(url.hostname, opts.allowInsecure), deadline]);
    const sent = request(url, target, body, headers, deadline);
    socketClosed = sent.closed;
    const statusCode = await Promise.race([sent.status, deadline]);
    if (statusCode >= 400) return done(statusCode, `receiver answered ${statusCode}`);
    return done(statusCode, null);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    const reason = e instanceof RefusedTargetError ? e.publicMessage : err.code ? `connection failed: ${err.code}` : err.message;
    return done(null, reason);
  } finally {
    // The deadline keeps guarding the rest of the answer's body after the status is known.
    void socketClosed.then(() => clearTimeout(timer));
  }
}

function request(url: URL, target: VettedTarget, body: Buffer, headers: Record<string, string>, deadline: Promise<never>) {
  const mod = url.protocol === "https:" ? https : http;
  const req = mod.request({
    method: "POST",
    hostname: url.hostname.replace(/^\[|\]$/g, ""),
    port: url.port || undefined,
    path: url.pathname + url.search,
    headers,
    agent: false,
    lookup: pinnedLookup(target),
  });
  const closed = new Promise<void>((resolve) => req.on("close", () => resolve()));
  const status = new Promise<number>((resolve, reject) => {
    // On timeout the socket is torn down, so a hanging receiver sees the connection close.
    deadline.catch((e: Error) => req.destroy(e));
    req.on("error", reject);
    req.on("response", (res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      res.on("end", () => req.destroy());
    });
    req.end(body);
  });
  return { status, closed };
}
