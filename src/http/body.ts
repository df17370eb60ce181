import * as v from "valibot";
import type { H3Event } from "h3";
import { fail } from "../errors.ts";
import { issueMessage } from "../tools/issue-message.ts";
import { isPlainObject } from "../tools/merge-patch.ts";

/** Turns the first valibot issue into a 400 that names the field. */
export function parseInput<S extends v.GenericSchema>(schema: S, value: unknown, where = "body"): v.InferOutput<S> {
  const result = v.safeParse(schema, value);
  if (result.success) return result.output;
  throw fail("invalid_request", issueMessage(result.issues[0], where));
}

/** Reads a body of any type, refusing more than `limit` bytes while streaming. */
export async function readLimited(event: H3Event, limit: number): Promise<string> {
  const declared = event.req.headers.get("content-length");
  if (declared !== null && Number(declared) > limit) {
    throw fail("payload_too_large", `The request body is larger than ${limit} bytes.`);
  }
  const body = event.req.body;
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw fail("payload_too_large", `The request body is larger than ${limit} bytes.`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * Reads a JSON body: `application/json` only (other types are 415, which also closes the
 * CSRF path of form posts), at most `limit` bytes counted while streaming, then validated.
 * An empty body is treated as `{}` so endpoints whose fields are all optional accept none.
 */
export async function readJson<S extends v.GenericSchema>(event: H3Event, schema: S, limit: number): Promise<v.InferOutput<S>> {
  const type = event.req.headers.get("content-type");
  const text = await readLimitedIfTyped(event, type, limit);
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
  return parseInput(schema, value);
}

async function readLimitedIfTyped(event: H3Event, type: string | null, limit: number): Promise<string> {
  const hasBody = event.req.headers.get("content-length") !== "0" && event.req.body !== null;
  if (type === null) {
    const text = hasBody ? await readLimited(event, limit) : "";
    if (text.trim() !== "") throw fail("unsupported_media_type", "Send JSON bodies with content-type: application/json.");
    return "";
  }
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw fail("unsupported_media_type", `Expected content-type application/json, got ${type.split(";")[0]}.`);
  }
  return readLimited(event, limit);
}
