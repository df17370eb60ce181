import { hash } from "node:crypto";

const BLOCK = 64;

/**
 * HMAC-SHA256 (RFC 2104) under one key, built on node:crypto's one-shot `hash`. Same output
 * as `createHmac("sha256", key)`, in about half the time: createHmac sets up an OpenSSL MAC
 * context on every call, which was 25k instructions of each refresh's two HMACs
 * (docs/performance.md, eleventh round). The key's padded blocks are computed once.
 */
export function hmacSha256(key: Uint8Array): (message: string, encoding: "base64url" | "hex") => string {
  const k = key.length > BLOCK ? Buffer.from(hash("sha256", key, "hex"), "hex") : key;
  // inner: key ⊕ ipad, then the message; outer: key ⊕ opad, then the inner digest.
  let inner = Buffer.alloc(BLOCK + 512);
  const outer = Buffer.alloc(BLOCK + 32);
  for (let i = 0; i < BLOCK; i++) {
    const b = k[i] ?? 0;
    inner[i] = b ^ 0x36;
    outer[i] = b ^ 0x5c;
  }
  return (message, encoding) => {
    if (inner.length < BLOCK + message.length * 3) {
      const bigger = Buffer.alloc(BLOCK + message.length * 3);
      inner.copy(bigger, 0, 0, BLOCK);
      inner = bigger;
    }
    const n = inner.write(message, BLOCK, "utf8");
    outer.write(hash("sha256", inner.subarray(0, BLOCK + n), "hex"), BLOCK, "hex");
    return hash("sha256", outer, encoding);
  };
}
