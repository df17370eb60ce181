import { hash } from "node:crypto";
import type { H3Event } from "h3";
import type { Core } from "../core.ts";
import type { TenantAuth } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { hashToken } from "../crypto/random.ts";
import { setReplyHeader } from "../http/reply-headers.ts";
import { jsonText } from "../http/json-text.ts";
import { runBatch, type BatchOperation, type WriteReply } from "./batch.ts";

/**
 * Idempotency-Key on writes: the first answer to a write sent with a key is kept, in the
 * write's own transaction, for 24 hours; a retry with the same key and the same request gets
 * that answer again (status and body, with `idempotent-replayed: true`) and writes nothing.
 * The same key with another request is 409. Keys are per app and tenant and stored as their
 * SHA-256. Only answers of writes that committed are kept: a write that failed wrote nothing,
 * so its retry simply runs again.
 */

export const IDEMPOTENCY_WINDOW_MS = 24 * 3600 * 1000;
/** Visible ASCII: what a UUID, a ULID or any client-made token is made of. */
const KEY = /^[\x21-\x7e]{1,255}$/;
export const REPLAYED_HEADER = "idempotent-replayed";

/** The request's Idempotency-Key; undefined without one, 400 when it is malformed. */
export function idempotencyKeyOf(event: H3Event): string | undefined {
  const key = event.req.headers.get("idempotency-key");
  if (key === null) return undefined;
  if (!KEY.test(key)) throw fail("invalid_request", "Idempotency-Key must be 1 to 255 visible ASCII characters, sent once (a random UUID per write is a good choice).");
  return key;
}

/**
 * Runs `ops` (one operation when `single`) under the key, or answers what the key's first
 * request answered. `request` is what makes two requests the same: method, path and body.
 */
export async function idempotentWrite(core: Core, event: H3Event, auth: TenantAuth, key: string, request: string, ops: BatchOperation[], single: boolean) {
  const keyHash = hashToken(key);
  const requestHash = hash("sha256", request, "hex");
  const notBefore = core.clock() - IDEMPOTENCY_WINDOW_MS;
  const replay = async (): Promise<WriteReply | undefined> => {
    const kept = await core.db.records.keptReply(auth.app.id, auth.tenantId, keyHash, notBefore);
    if (!kept) return undefined;
    if (kept.requestHash !== requestHash) {
      throw fail("conflict", "This Idempotency-Key was used in the last 24 hours for another request (a different method, path or body): send a new key for a new write.");
    }
    setReplyHeader(event, REPLAYED_HEADER, "true");
    return { status: kept.status, body: kept.body };
  };
  const reply = (await replay()) ?? (await runBatch(core, auth, ops, { single, claim: { appId: auth.app.id, tenantId: auth.tenantId, keyHash, requestHash, expiredBefore: notBefore } }));
  if (reply !== "taken") return send(event, reply);
  // Another request with the key committed while this one waited: its answer is the answer.
  const kept = await replay();
  if (!kept) throw fail("conflict", "Another request with this Idempotency-Key was being written at the same time: retry it.");
  return send(event, kept);
}

/** A write's answer as the reply: its status, and its JSON text or no body. */
export function send(event: H3Event, reply: WriteReply) {
  event.res.status = reply.status;
  return reply.body === null ? null : jsonText(reply.body);
}
