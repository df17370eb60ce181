import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const PREFIX = "enc:v1:";

/**
 * Encrypts the secrets tenantd must read back (webhook signing secrets, OAuth client
 * secrets, billing keys) with AES-256-GCM under a key derived from the server key.
 */
export interface SecretBox {
  seal(plaintext: string): string;
  open(sealed: string): string;
  isSealed(value: unknown): value is string;
  /** A subkey for another purpose (e.g. signing access tokens), derived with HKDF. */
  deriveKey(purpose: string): Buffer;
}

export function createSecretBox(serverKey: Buffer): SecretBox {
  const deriveKey = (purpose: string) =>
    Buffer.from(hkdfSync("sha256", serverKey, Buffer.alloc(0), `tenantd:${purpose}`, 32));
  const key = deriveKey("secret-box");
  return {
    seal(plaintext) {
      const iv = randomBytes(12);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return PREFIX + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
    },
    open(sealed) {
      if (!sealed.startsWith(PREFIX)) throw new Error("tenantd: value is not an encrypted secret");
      const raw = Buffer.from(sealed.slice(PREFIX.length), "base64url");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      try {
        return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
      } catch {
        throw new Error(
          "tenantd: cannot decrypt a stored secret: the server key differs from the one it was sealed with (check TENANTD_SECRET_KEY or <dataDir>/secret.key)",
        );
      }
    },
    isSealed: (value): value is string => typeof value === "string" && value.startsWith(PREFIX),
    deriveKey,
  };
}
