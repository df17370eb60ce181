import { createHmac } from "node:crypto";

export const USER_AGENT = "tenantd/1.0";

/** What every delivery's body holds, in the spec's field order. */
export interface EventEnvelope {
  event: string;
  timestamp: number;
  appId: string;
  tenantId: string | null;
  email: string | null;
  payload: Record<string, unknown>;
}

/** Lowercase hex HMAC-SHA256 of `{t}.{rawBody}` with the secret. */
export function computeSignature(secret: string, timestamp: number, rawBody: Buffer): string {
  return createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest("hex");
}

/**
 * Serializes the envelope once and signs those exact bytes; the sender writes the same
 * buffer, so what the receiver hashes is what was signed.
 */
export function signEnvelope(secret: string, envelope: EventEnvelope): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(JSON.stringify(envelope), "utf8");
  const t = envelope.timestamp;
  return {
    body,
    headers: {
      "content-type": "application/json",
      "content-length": String(body.length),
      "user-agent": USER_AGENT,
      "x-service-timestamp": String(t),
      "x-service-signature": `t=${t},v1=${computeSignature(secret, t, body)}`,
    },
  };
}
