import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

const PREFIX = "enc:v1:";
/** v2 binds a context (the app id, the session id) as AES-GCM associated data. */
const PREFIX_V2 = "enc:v2:";
const IV_BYTES = 12;
const TAG_BYTES = 16;

/**
 * Encrypts the secrets tenantd must read back (webhook signing secrets, OAuth client
 * secrets, billing keys) with AES-256-GCM under a key derived from the server key.
 */
export interface SecretBox {
  /** Encrypts; with `context`, the value opens only with the same context (a secret copied to another app's row does not open). */
  seal(plaintext: string, context?: string): string;
  open(sealed: string, context?: string): string;
  isSealed(value: unknown): value is string;
  /** A subkey for another purpose (e.g. signing access tokens), derived with HKDF. */
  deriveKey(purpose: string): Buffer;
}

export function createSecretBox(serverKey: Buffer): SecretBox {
  const deriveKey = (purpose: string) =>
    Buffer.from(hkdfSync("sha256", serverKey, Buffer.alloc(0), `tenantd:${purpose}`, 32));
  const key = deriveKey("secret-box");
  return {
    seal(plaintext, context) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
      if (context !== undefined) cipher.setAAD(Buffer.from(context, "utf8"));
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return (context !== undefined ? PREFIX_V2 : PREFIX) + Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
    },
    open(sealed, context) {
      const v2 = sealed.startsWith(PREFIX_V2);
      if (!v2 && !sealed.startsWith(PREFIX)) throw new Error("tenantd: value is not an encrypted secret");
      if (v2 && context === undefined) throw new Error("tenantd: this secret is bound to a context; open it with the same one");
      const raw = Buffer.from(sealed.slice(PREFIX.length), "base64url");
      // A short tag would let a forger try far fewer guesses: exactly 16 bytes, always.
      if (raw.length < IV_BYTES + TAG_BYTES) throw new Error("tenantd: a stored secret is truncated");
      const decipher = createDecipheriv("aes-256-gcm", key, raw.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      if (v2) decipher.setAAD(Buffer.from(context!, "utf8"));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8");
      } catch {
        throw new Error(
          "tenantd: cannot decrypt a stored secret: the server key differs from the one it was sealed with (check TENANTD_SECRET_KEY or <dataDir>/secret.key), or it was moved from another record",
        );
      }
    },
    isSealed: (value): value is string => typeof value === "string" && (value.startsWith(PREFIX) || value.startsWith(PREFIX_V2)),
    deriveKey,
  };
}
