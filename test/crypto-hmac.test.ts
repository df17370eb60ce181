import { createHash, createHmac, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hmacSha256 } from "../src/crypto/hmac.ts";
import { hashToken } from "../src/crypto/random.ts";

describe("HMAC-SHA256 on one-shot hashes", () => {
  const messages = ["", "a", "x".repeat(55), "y".repeat(64), "z".repeat(65), "rt_" + randomBytes(32).toString("base64url"), "é✓𝄞 mixed", "\ud800 lone surrogate", "w".repeat(2000), "short again"];

  for (const length of [0, 1, 32, 63, 64, 65, 200]) {
    it(`matches createHmac under a ${length}-byte key, in turn over short, block-sized, long and unicode messages`, () => {
      const key = randomBytes(length);
      const mac = hmacSha256(key);
      for (const message of messages) {
        expect(mac(message, "base64url")).toBe(createHmac("sha256", key).update(message).digest("base64url"));
        expect(mac(message, "hex")).toBe(createHmac("sha256", key).update(message).digest("hex"));
      }
    });
  }

  it("keeps two keys apart", () => {
    const a = hmacSha256(Buffer.from("key a"));
    const b = hmacSha256(Buffer.from("key b"));
    expect(a("same", "hex")).not.toBe(b("same", "hex"));
    expect(a("same", "hex")).toBe(createHmac("sha256", "key a").update("same").digest("hex"));
  });

  it("hashToken is the SHA-256 hex the database has always kept", () => {
    for (const token of ["rt_abc", "", "é✓"]) expect(hashToken(token)).toBe(createHash("sha256").update(token).digest("hex"));
  });
});
