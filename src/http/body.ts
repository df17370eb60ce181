import * as v from "valibot";
import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";
import { fail } from "../errors.ts";
import { issueMessage } from "../tools/issue-message.ts";
import { isPlainObject } from "../tools/merge-patch.ts";
import { hostParsedBody } from "./host-body.ts";
import { bodyIdleMs, bodyTimedOut, readChunk } from "./body-timeout.ts";
import { dropRest } from "./drop-rest.ts";
import { nodeRequest, singleHeader } from "./request-headers.ts";
import { andThen, type Awaitable } from "../awaitable.ts";

/** Turns the first valibot issue into a 400 that names the field. */
export function parseInput<S extends v.GenericSchema>(schema: S, value: unknown, where = "body"): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  throw fail("invalid_request", issueMessage(result.issues[0], where));
}

const tooLarge = (limit: number) => fail("payload_too_large", `The request body is larger than ${limit} bytes.`);

/** After refusing a body, at most this much more of it is read and dropped (dropRest). */
export const DROP_AFTER_REFUSAL_BYTES = 16 * 1024 * 1024;

/** JSON is UTF-8 (RFC 8259): a byte sequence that is not is refused, never patched with U+FFFD. */
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
function decodeUtf8(bytes: Buffer): string {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    throw fail("invalid_json", "The request body is not valid UTF-8: send JSON encoded as UTF-8.");
  }
}

/** The client went away before its body ended: a 400 no one reads, not a server error to log. */
export const bodyCutOff = () => fail("invalid_request", "The request body was cut off.");

/** An error from reading a Node request's body: Node's "aborted" (the client reset the connection) is the body cut off. */
export function bodyReadError(error: Error): Error {
  return (error as NodeJS.ErrnoException).code === "ECONNRESET" ? bodyCutOff() : error;
}

/**
 * The Node request under h3's web Request when served by node:http, if nothing has read its
 * body yet. Reading it directly avoids building a web ReadableStream per request, which cost
 * more CPU than the rest of a small JSON request together (see docs/performance.md).
 */
export function unreadNodeRequest(event: H3Event): IncomingMessage | undefined {
  const req = nodeRequest(event);
  if (!req || req.readableDidRead || req.readableEnded || req.destroyed || req.listenerCount("data") > 0) return undefined;
  return req;
}

function readNodeLimited(req: IncomingMessage, limit: number, idleMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let idle: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idle);
      idle = setTimeout(() => {
        cleanup();
        // The 408 goes out with connection: close; the stalled body is never waited for again.
        reject(bodyTimedOut(idleMs));
      }, idleMs);
    };
    const cleanup = () => {
      clearTimeout(idle);
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        dropRest(req, DROP_AFTER_REFUSAL_BYTES, idleMs);
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
      armIdle();
    };
    const onEnd = () => {
      cleanup();
      try {
        resolve(decodeUtf8(Buffer.concat(chunks, size)));
      } catch (e) {
        reject(e);
      }
    };
    const onError = (error: Error) => {
      cleanup();
      reject(bodyReadError(error));
    };
    // The client went away before the body ended.
    const onClose = () => {
      cleanup();
      reject(bodyCutOff());
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
    armIdle();
  });
}

/**
 * The whole body, when Node has already buffered all of it (a small body arrives with its
 * headers): read at once, without the listeners, idle timer and promise of a streamed read.
 * Only when the declared length is all there; anything else streams.
 */
function bufferedNodeBody(req: IncomingMessage, declared: string | null): Buffer | undefined {
  if (declared === null || req.readableFlowing) return undefined;
  const length = Number(declared);
  if (!(length > 0) || req.readableLength !== length) return undefined;
  // Without a size, read() hands over everything buffered, in one Buffer.
  const whole = req.read() as Buffer | null;
  if (whole?.length !== length) throw new Error("body: Node's buffer did not hand over the whole body");
  return whole;
}

/**
 * Reads a body of any type as strict UTF-8, refusing more than `limit` bytes while streaming and
 * a body that stalls. Synchronous when the whole body is already buffered (bufferedNodeBody).
 */
export function readLimited(event: H3Event, limit: number): Awaitable<string>;
/** The same, handing the text to `next`: in the same microtask when the body comes a moment later. */
export function readLimited<R>(event: H3Event, limit: number, next: (text: string) => Awaitable<R>): Awaitable<R>;
export function readLimited(event: H3Event, limit: number, next: (text: string) => unknown = asIs): unknown {
  const declared = singleHeader(event, "content-length");
  const nodeReq = unreadNodeRequest(event);
  if (declared !== null && Number(declared) > limit) {
    if (nodeReq) dropRest(nodeReq, DROP_AFTER_REFUSAL_BYTES, bodyIdleMs(event));
    throw tooLarge(limit);
  }
  const hostText = hostParsedBody(event, limit);
  if (hostText !== undefined) return next(hostText);
  const idleMs = bodyIdleMs(event);
  if (nodeReq) {
    const whole = bufferedNodeBody(nodeReq, declared);
    if (whole) return next(decodeUtf8(whole));
    // A handler that reached the body without waiting runs while Node is still parsing the
    // request's packet: a small body in it is buffered by the time a microtask runs. `next`
    // runs in that microtask: each promise more in the chain costs the cheapest requests.
    return Promise.resolve().then(() => {
      const later = bufferedNodeBody(nodeReq, declared);
      return later ? next(decodeUtf8(later)) : readNodeLimited(nodeReq, limit, idleMs).then(next);
    });
  }
  return readWebLimited(event, limit, idleMs).then(next);
}

const asIs = <T>(value: T): T => value;

async function readWebLimited(event: H3Event, limit: number, idleMs: number): Promise<string> {
  const body = event.req.body;
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await readChunk(reader, idleMs).catch(async (e: unknown) => {
      await reader.cancel().catch(() => {});
      throw e;
    });
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return decodeUtf8(Buffer.concat(chunks));
}

/**
 * Reads a JSON body: `application/json` only (other types are 415, which also closes the
 * CSRF path of form posts), at most `limit` bytes counted while streaming, then validated.
 * An empty body is treated as `{}` so endpoints whose fields are all optional accept none.
 */
export function readJson<S extends v.GenericSchema>(event: H3Event, schema: S, limit: number): Awaitable<v.InferOutput<S>>;
/** The same, handing the body to `next` without a promise of its own between (`readLimited`). */
export function readJson<S extends v.GenericSchema, R>(event: H3Event, schema: S, limit: number, next: (body: v.InferOutput<S>) => Awaitable<R>): Awaitable<R>;
export function readJson<S extends v.GenericSchema>(event: H3Event, schema: S, limit: number, next: (body: v.InferOutput<S>) => unknown = asIs): unknown {
  return readLimitedIfTyped(event, singleHeader(event, "content-type"), limit, (text) => next(parseJsonBody(text, schema)));
}

/**
 * Each body schema's output for an empty body (`{}` or none), when that output holds only
 * primitives and arrays of them: a fresh copy of it is the same answer as valibot's, without
 * running valibot on every `{}` that a usage increment or an introspection sends. The body
 * schemas read neither the clock nor randomness (no function defaults), so their output
 * for `{}` never changes.
 */
const emptyBodies = new WeakMap<v.GenericSchema, Record<string, unknown>>();

function copyOfEmpty(kept: Record<string, unknown>): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key in kept) {
    const value = kept[key];
    copy[key] = Array.isArray(value) ? value.slice() : value;
  }
  return copy;
}

/** Whether valibot's output for `{}` can be kept and copied (copyOfEmpty): primitives and arrays of primitives only. */
function keepable(output: unknown): output is Record<string, unknown> {
  if (!isPlainObject(output)) return false;
  const primitive = (x: unknown) => x === null || typeof x !== "object";
  return Object.values(output).every((x) => primitive(x) || (Array.isArray(x) && x.every(primitive)));
}

function parseJsonBody<S extends v.GenericSchema>(text: string, schema: S): v.InferOutput<S> {
  const empty = text === "{}" || text === "";
  if (empty) {
    const kept = emptyBodies.get(schema);
    if (kept) return copyOfEmpty(kept) as v.InferOutput<S>;
  }
  const output = parseFreshJsonBody(text, schema);
  if (empty && keepable(output)) emptyBodies.set(schema, copyOfEmpty(output));
  return output;
}

function parseFreshJsonBody<S extends v.GenericSchema>(text: string, schema: S): v.InferOutput<S> {
  let value: unknown = {};
  if (text.trim() !== "") {
    try {
      value = JSON.parse(text);
    } catch {
      throw fail("invalid_json", "The request body is not valid JSON.");
    }
  }
  // Every JSON body of the API is an object; valibot's object schemas would take an array.
  if (!isPlainObject(value)) throw fail("invalid_request", "The request body must be a JSON object.");
  // A misspelt optional field would otherwise be dropped in silence (an `expiresIn` for
  // `expiresInSeconds` quietly gets the default); it is named first, before what it hides.
  const known = objectEntries(schema);
  if (known) {
    const unknown = Object.keys(value).find((key) => !Object.hasOwn(known, key));
    if (unknown !== undefined) {
      throw fail("invalid_request", `body.${unknown.slice(0, 64)} is not a known field: check its spelling (known: ${Object.keys(known).join(", ")}).`);
    }
  }
  return parseInput(schema, value);
}

/** The fields of an object schema, also when it sits inside a pipe (`v.pipe(v.unknown(), …, v.object(…))`). */
function objectEntries(schema: unknown): Record<string, unknown> | undefined {
  const s = schema as { entries?: Record<string, unknown>; pipe?: unknown[] };
  if (s.entries) return s.entries;
  for (const item of s.pipe ?? []) {
    const found = item !== schema ? objectEntries(item) : undefined;
    if (found) return found;
  }
  return undefined;
}

function readLimitedIfTyped(event: H3Event, type: string | null, limit: number, next: (text: string) => unknown): unknown {
  // By method, not by touching event.req.body: that getter builds the web stream readLimited avoids.
  const hasBody = singleHeader(event, "content-length") !== "0" && event.req.method !== "GET" && event.req.method !== "HEAD";
  if (type === null) {
    return andThen(hasBody ? readLimited(event, limit) : "", (text) => {
      if (text.trim() !== "") throw fail("unsupported_media_type", "Send JSON bodies with content-type: application/json.");
      return next("");
    });
  }
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw fail("unsupported_media_type", `Expected content-type application/json, got ${type.split(";")[0]}.`);
  }
  return readLimited(event, limit, next);
}
