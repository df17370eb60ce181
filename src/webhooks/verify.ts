/**
 * tenantd/webhooks: verifies a delivery in the app's backend with Web Crypto only, so it
 * runs in Node >= 20, Deno, Bun and edge runtimes. Docs: docs/webhooks.md.
 */
import type { InferOutput } from "valibot";
import type { WebhookEvent as EventSchema } from "../openapi/schemas.ts";

/** A delivery's body: `{ event, timestamp, appId, tenantId, email, payload }`. */
export type WebhookEvent = InferOutput<typeof EventSchema>;

/**
 * Why a delivery was refused. Malformed headers: `missing_signature` (no
 * x-service-signature), `malformed_signature` (not `t=<seconds>,v1=<64 hex>`),
 * `timestamp_mismatch` (x-service-timestamp differs from its t=). Then `bad_signature`
 * (not this body and secret), `stale_timestamp` (outside the tolerance: a possible replay),
 * `invalid_body` (signed, but not a tenantd event).
 */
export type WebhookFailure = "missing_signature" | "malformed_signature" | "timestamp_mismatch" | "bad_signature" | "stale_timestamp" | "invalid_body";

/**
 * The verdict. On success, `signature` is the verified v1 value: keep the ones seen within
 * the tolerance to refuse a captured delivery sent again.
 */
export type VerifyResult = { ok: true; event: WebhookEvent; signature: string } | { ok: false; error: WebhookFailure; message: string };

export interface VerifyOptions {
  /** How old (or how far ahead) a delivery may be. Default 300 seconds. */
  toleranceSeconds?: number;
  /** The current time, in milliseconds since the epoch or as a Date. Default: now. */
  now?: number | Date;
}

type HeaderBag = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === "function") return (headers as Headers).get(name) ?? undefined;
  const bag = headers as Record<string, string | string[] | undefined>;
  const key = Object.keys(bag).find((k) => k.toLowerCase() === name);
  const value = key === undefined ? undefined : bag[key];
  return Array.isArray(value) ? value.join(",") : value;
}

const encoder = new TextEncoder();
const fail = (error: WebhookFailure, message: string): VerifyResult => ({ ok: false, error, message });

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * Checks `x-service-signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "{t}.{raw body}">`)
 * against the raw body exactly as received, then the timestamp, then parses the event.
 * The comparison is Web Crypto's HMAC verify, which takes the same time for every wrong
 * signature. Pass the body before any JSON parsing: re-serialized JSON will not match.
 */
export async function verifyWebhook(rawBody: string | ArrayBuffer | Uint8Array, headers: HeaderBag, secret: string, options: VerifyOptions = {}): Promise<VerifyResult> {
  const { toleranceSeconds = 300 } = options;
  const signature = header(headers, "x-service-signature");
  if (!signature) return fail("missing_signature", "The x-service-signature header is missing: this request was not signed by tenantd.");
  const m = /^\s*t=(\d{1,12}),((?:v1=[0-9a-fA-F]{64},?)+)\s*$/.exec(signature);
  if (!m) return fail("malformed_signature", "x-service-signature is not t=<seconds>,v1=<64 hex characters>.");
  const t = Number(m[1]);
  const stated = header(headers, "x-service-timestamp");
  if (stated !== undefined && stated.trim() !== m[1]) return fail("timestamp_mismatch", "x-service-timestamp does not match the t= of x-service-signature.");

  const body = typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody instanceof Uint8Array ? rawBody : new Uint8Array(rawBody);
  const signed = new Uint8Array(encoder.encode(`${t}.`).length + body.length);
  signed.set(encoder.encode(`${t}.`));
  signed.set(body, signed.length - body.length);
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  let valid: string | undefined;
  for (const [, hex] of m[2]!.matchAll(/v1=([0-9a-fA-F]{64})/g)) {
    if (await crypto.subtle.verify("HMAC", key, hexToBytes(hex!), signed)) valid = hex!.toLowerCase();
  }
  if (!valid) return fail("bad_signature", "The signature does not match this body and secret (a changed body, or the secret was rotated).");

  const now = options.now === undefined ? Date.now() : options.now instanceof Date ? options.now.getTime() : options.now;
  if (Math.abs(now / 1000 - t) > toleranceSeconds) {
    return fail("stale_timestamp", `The delivery was signed at ${new Date(t * 1000).toISOString()}, more than ${toleranceSeconds} s from now: refused as a possible replay.`);
  }
  let event: unknown;
  try {
    event = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return fail("invalid_body", "The signed body is not JSON.");
  }
  const e = event as Partial<WebhookEvent> | null;
  if (!e || typeof e.event !== "string" || e.timestamp !== t || typeof e.appId !== "string") {
    return fail("invalid_body", "The signed body is not a tenantd event (event, timestamp, appId), or its timestamp differs from the signature's.");
  }
  return { ok: true, event: e as WebhookEvent, signature: valid };
}
