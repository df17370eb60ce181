// A software authenticator: real ES256 keys, real CBOR attestation objects ("none") and real
// signed assertions, built with node:crypto, so the API tests exercise the same checks a
// browser's passkey meets.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";

type Cbor = number | string | Uint8Array | Map<Cbor, Cbor> | { [k: string]: Cbor };

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 256) return Buffer.from([(major << 5) | 24, n]);
  if (n < 65536) return Buffer.from([(major << 5) | 25, n >> 8, n & 255]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

/** The CBOR subset WebAuthn needs: integers, text, bytes, maps. */
export function cbor(value: Cbor): Buffer {
  if (typeof value === "number") return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === "string") return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  const entries = value instanceof Map ? [...value.entries()] : Object.entries(value);
  return Buffer.concat([head(5, entries.length), ...entries.flatMap(([k, v]) => [cbor(k), cbor(v)])]);
}

const b64 = (b: Uint8Array | string) => Buffer.from(b).toString("base64url");
const sha256 = (b: Uint8Array | string) => createHash("sha256").update(b).digest();

export interface SoftCredential {
  id: Buffer;
  key: KeyObject;
  userHandle: string;
  counter: number;
}

export interface Ceremony {
  /** The page the browser ran on (default: the authenticator's origin). */
  origin?: string;
  /** The RP id the authenticator hashes (default: the options' one). */
  rpId?: string;
  /** User verified (PIN, biometric); default true. */
  uv?: boolean;
  /** Signature counter to send (default: one more than the last). */
  counter?: number;
  credential?: SoftCredential;
}

/** ES256 on P-256, what platform authenticators make; Ed25519 (EdDSA) as some security keys do. */
export type SoftKeyType = "es256" | "ed25519";

export function softAuthenticator(origin: string, keyType: SoftKeyType = "es256") {
  const credentials: SoftCredential[] = [];
  const flags = (uv: boolean, attested: boolean) => 0x01 | (uv ? 0x04 : 0) | (attested ? 0x40 : 0);

  return {
    credentials,
    /** Answers `navigator.credentials.create()` options. */
    create(options: { challenge: string; rp: { id: string }; user: { id: string } }, c: Ceremony = {}) {
      const { privateKey, publicKey } = keyType === "ed25519" ? generateKeyPairSync("ed25519") : generateKeyPairSync("ec", { namedCurve: "P-256" });
      const jwk = publicKey.export({ format: "jwk" });
      const cose =
        keyType === "ed25519"
          ? cbor(new Map<Cbor, Cbor>([[1, 1], [3, -8], [-1, 6], [-2, Buffer.from(jwk.x!, "base64url")]]))
          : cbor(new Map<Cbor, Cbor>([[1, 2], [3, -7], [-1, 1], [-2, Buffer.from(jwk.x!, "base64url")], [-3, Buffer.from(jwk.y!, "base64url")]]));
      const cred: SoftCredential = { id: randomBytes(16), key: privateKey, userHandle: options.user.id, counter: 0 };
      const idLen = Buffer.alloc(2);
      idLen.writeUInt16BE(cred.id.length);
      const counter = Buffer.alloc(4);
      const authData = Buffer.concat([sha256(c.rpId ?? options.rp.id), Buffer.from([flags(c.uv ?? true, true)]), counter, Buffer.alloc(16), idLen, cred.id, cose]);
      const clientData = JSON.stringify({ type: "webauthn.create", challenge: options.challenge, origin: c.origin ?? origin, crossOrigin: false });
      credentials.push(cred);
      return {
        id: b64(cred.id),
        rawId: b64(cred.id),
        type: "public-key",
        response: { clientDataJSON: b64(clientData), attestationObject: b64(cbor({ fmt: "none", attStmt: {}, authData })), transports: ["internal"] },
        clientExtensionResults: {},
        authenticatorAttachment: "platform",
      };
    },
    /** Answers `navigator.credentials.get()` options with the newest credential (or `c.credential`). */
    get(options: { challenge: string; rpId?: string }, c: Ceremony = {}) {
      const cred = c.credential ?? credentials.at(-1)!;
      cred.counter = c.counter ?? cred.counter + 1;
      const counter = Buffer.alloc(4);
      counter.writeUInt32BE(cred.counter);
      const authData = Buffer.concat([sha256(c.rpId ?? options.rpId!), Buffer.from([flags(c.uv ?? true, false)]), counter]);
      const clientData = JSON.stringify({ type: "webauthn.get", challenge: options.challenge, origin: c.origin ?? origin, crossOrigin: false });
      const signature = sign(cred.key.asymmetricKeyType === "ed25519" ? null : "sha256", Buffer.concat([authData, sha256(clientData)]), cred.key);
      return {
        id: b64(cred.id),
        rawId: b64(cred.id),
        type: "public-key",
        response: { clientDataJSON: b64(clientData), authenticatorData: b64(authData), signature: b64(signature), userHandle: cred.userHandle },
        clientExtensionResults: {},
        authenticatorAttachment: "platform",
      };
    },
  };
}
