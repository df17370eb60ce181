import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The body of every tenantd delivery.
 * @typedef {{ event: string, timestamp: number, appId: string, tenantId: string | null, email: string | null, payload: Record<string, unknown> }} TenantdEvent
 */

/**
 * Checks a delivery the way the spec says: HMAC-SHA256 over `{t}.{raw body}` with the
 * secret, compared in constant time with the `v1=` element, and `t` within 5 minutes of now.
 * Pass the raw bytes as received, never re-serialized JSON.
 *
 * @param {Buffer} rawBody
 * @param {{ signature?: string | null, timestamp?: string | null }} headers
 * @param {{ secret: string, toleranceSeconds?: number, now?: () => number }} opts
 * @returns {{ ok: true, event: TenantdEvent, signature: string } | { ok: false, reason: string }}
 */
export function verifyDelivery(rawBody, headers, opts) {
  if (!headers.signature) return { ok: false, reason: "missing_signature" };
  const parts = new Map(headers.signature.split(",").map((p) => /** @type {[string, string]} */ (p.trim().split("=", 2))));
  const t = Number(parts.get("t"));
  const v1 = parts.get("v1") ?? "";
  if (!/^\d+$/.test(parts.get("t") ?? "") || !/^[0-9a-f]{64}$/.test(v1)) return { ok: false, reason: "malformed_signature" };
  if (headers.timestamp != null && headers.timestamp !== String(t)) return { ok: false, reason: "timestamp_mismatch" };
  const nowSeconds = Math.floor((opts.now ?? Date.now)() / 1000);
  if (Math.abs(nowSeconds - t) > (opts.toleranceSeconds ?? 300)) return { ok: false, reason: "stale_timestamp" };

  const expected = createHmac("sha256", opts.secret).update(`${t}.`).update(rawBody).digest();
  if (!timingSafeEqual(expected, Buffer.from(v1, "hex"))) return { ok: false, reason: "bad_signature" };

  let event;
  try {
    event = JSON.parse(rawBody.toString("utf8"));
  } catch {
    return { ok: false, reason: "invalid_body" };
  }
  if (typeof event?.event !== "string" || event.timestamp !== t) return { ok: false, reason: "invalid_body" };
  return { ok: true, event, signature: v1 };
}

/**
 * Remembers the signatures accepted within the window, so a captured delivery sent again
 * is refused. Past the window the timestamp check refuses it anyway, so entries expire.
 */
export function createReplayGuard(toleranceSeconds = 300) {
  /** @type {Map<string, number>} */
  const seen = new Map();
  return {
    /** True the first time a signature is presented; false for a replay. */
    firstSight(/** @type {string} */ signature, /** @type {number} */ timestamp, /** @type {number} */ nowMs) {
      const now = Math.floor(nowMs / 1000);
      for (const [sig, until] of seen) if (until < now) seen.delete(sig);
      if (seen.has(signature)) return false;
      seen.set(signature, timestamp + toleranceSeconds);
      return true;
    },
    get size() {
      return seen.size;
    },
  };
}
