import type { IncomingMessage } from "node:http";
import type { H3Event } from "h3";
import { fail } from "../errors.ts";
import { nodeRequest } from "./request-headers.ts";

/**
 * A host framework's body parser (Express's `express.json()`, `express.text()`, `express.raw()`)
 * may have read the request before tenantd sees it; the Node stream is then empty, but the
 * parsed value sits on `req.body`. This is the body as text when that happened, else undefined.
 */
export function hostParsedBody(event: H3Event, limit: number): string | undefined {
  const req = nodeRequest(event) as (IncomingMessage & { body?: unknown }) | undefined;
  if (!req || !bodyWasRead(req)) return undefined;
  const text = bodyAsText(req.body);
  if (text === undefined) throw bodyReadElsewhere();
  if (Buffer.byteLength(text) > limit) throw fail("payload_too_large", `The request body is larger than ${limit} bytes.`);
  return text;
}

export function bodyWasRead(req: IncomingMessage): boolean {
  return req.readableDidRead || req.readableEnded;
}

/** The host-parsed body as JSON text, when it is a value tenantd can take (JSON endpoints). */
export function bodyAsText(body: unknown): string | undefined {
  if (typeof body === "string") return body;
  if (Buffer.isBuffer(body)) return body.toString("utf8");
  if (body !== null && typeof body === "object" && (Array.isArray(body) || Object.getPrototypeOf(body) === Object.prototype)) return JSON.stringify(body);
  return undefined;
}

export const BODY_READ_MESSAGE =
  "tenantd cannot read this request body: another middleware read it first. Mount tenantd before body parsers: app.use(toNodeHandler(backend)) above app.use(express.json()) and file-upload middleware (docs/embedding.md).";

const bodyReadElsewhere = () => fail("unsupported_media_type", BODY_READ_MESSAGE);
