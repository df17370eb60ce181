import { sign as signWith, timingSafeEqual, verify as verifyWith, type KeyObject } from "node:crypto";
import { hmacSha256 } from "../crypto/hmac.ts";
import { jsonString } from "../tools/json-string.ts";

export const ACCESS_TOKEN_TTL_SECONDS = 15 * 60;

export interface AccessClaims {
  iss: "tenantd";
  /** tenant id */
  sub: string;
  /** app id */
  app: string;
  /** session id: checked on every request, so ending the session refuses the token at once */
  sid: string;
  /** family owner's tenant id, or null */
  pid: string | null;
  /**
   * Set on a developer's read-only impersonation token only (src/admin/impersonation.ts):
   * the developer's id. The tenant guard refuses every write made with such a token.
   */
  imp?: string;
  iat: number;
  exp: number;
}

// The header of the HS256 tokens issued before access tokens were signed with each app's
// Ed25519 key: verified for the 15 minutes such a token lives after an upgrade.
const HS256_HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

/**
 * The only header tenantd issues, one per key. A token whose header is not exactly this text
 * for its kid (alg "none", HS256 under the public key, keys reordered, extra fields) is refused
 * by comparison, before any signature is computed: no algorithm switching.
 */
export function tokenHeader(kid: string): string {
  return Buffer.from(`{"alg":"EdDSA","typ":"JWT","kid":${jsonString(kid)}}`).toString("base64url");
}

/** An app's current signing key (src/auth/signing-keys.ts). */
export interface TokenSigner {
  kid: string;
  /** tokenHeader(kid) */
  header: string;
  privateKey: KeyObject;
}

/** A key that verifies tokens: the app's current key or one retired less than an overlap ago. */
export interface TokenVerifier {
  appId: string;
  publicKey: KeyObject;
  /** When the key stops verifying (its retirement plus the overlap), or null while current. */
  verifiesUntil: number | null;
}

/** Key ids as tenantd makes them: any other kid is refused without a lookup. */
export const KID_PATTERN = /^key_[a-z2-7]{16}$/;

/**
 * The claims' JSON, in `AccessClaims` order, written field by field: JSON.stringify of the
 * whole object cost about 7,500 instructions of every refresh (count.sh), most of it walking
 * the object rather than escaping its four short strings.
 */
function claimsJson(claims: Omit<AccessClaims, "iss" | "iat" | "exp">, iat: number, exp: number): string {
  const pid = claims.pid == null ? "null" : jsonString(claims.pid);
  const imp = claims.imp === undefined ? "" : `,"imp":${jsonString(claims.imp)}`;
  return `{"iss":"tenantd","sub":${jsonString(claims.sub)},"app":${jsonString(claims.app)},"sid":${jsonString(claims.sid)},"pid":${pid}${imp},"iat":${iat},"exp":${exp}}`;
}

export type VerifyResult =
  | { ok: true; claims: AccessClaims }
  | { ok: false; reason: "malformed" | "signature" | "expired" }
  /** Signed under a key this process has not loaded yet: load it (signing-keys.ts) and verify again. */
  | { ok: false; reason: "unknown-key"; kid: string };

// An Ed25519 signature: 64 bytes, 86 base64url characters.
const EDDSA_SIGNATURE = /^[A-Za-z0-9_-]{86}$/;

/**
 * Verified tokens kept in memory (the session-state cache's bound): past it the earliest
 * verified go first. A token lives 15 minutes, so this bounds the tenants active at once
 * whose requests skip the HMAC; emptying the whole cache when full, as before, made every
 * token a miss once more tenants than the bound took turns (a list over 10,000 tenants).
 */
export const ACCESS_TOKEN_CACHE_SIZE = 50_000;

/**
 * EdDSA access tokens, signed with each app's key so other services can verify them offline
 * (the app's JWKS), with a cache of verified tokens (verification sits on every request).
 * `legacyKey` verifies the HS256 tokens of earlier versions; `verifierOf` finds a loaded key.
 */
export function createAccessTokens(legacyKey: Buffer, verifierOf: (kid: string) => TokenVerifier | undefined, maxCached = ACCESS_TOKEN_CACHE_SIZE) {
  const hmac = hmacSha256(legacyKey);
  const sign = (data: string) => hmac(data, "base64url");
  // The headers of keys seen, decoded: a header is one of a handful per app.
  const kids = new Map<string, string>();
  function kidOf(header: string): string | undefined {
    let kid = kids.get(header);
    if (kid !== undefined) return kid;
    try {
      kid = (JSON.parse(Buffer.from(header, "base64url").toString("utf8")) as { kid?: unknown }).kid as string;
    } catch {
      return undefined;
    }
    if (typeof kid !== "string" || !KID_PATTERN.test(kid) || tokenHeader(kid) !== header) return undefined;
    if (kids.size >= 1000) kids.clear();
    kids.set(header, kid);
    return kid;
  }
  /** The app whose key signed (null: the legacy key, any app), or why the signature is refused. */
  function checkSignature(parts: string[], nowMs: number): VerifyResult | { appId: string | null } {
    if (parts[0] === HS256_HEADER) {
      // Compared as text against the canonical encoding: a lenient decode would accept
      // endless spellings of one signature ("+/" for "-_", trailing junk, padding).
      const given = Buffer.from(parts[2]!, "utf8");
      const expected = Buffer.from(sign(`${parts[0]}.${parts[1]}`), "utf8");
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "signature" };
      return { appId: null };
    }
    const kid = kidOf(parts[0]!);
    if (kid === undefined) return { ok: false, reason: "malformed" };
    const key = verifierOf(kid);
    if (key === undefined) return { ok: false, reason: "unknown-key", kid };
    if (key.verifiesUntil !== null && key.verifiesUntil <= nowMs) return { ok: false, reason: "signature" };
    // One spelling of the signature: its last character's 4 spare bits must be zero.
    const sig = parts[2]!;
    if (!EDDSA_SIGNATURE.test(sig)) return { ok: false, reason: "signature" };
    const bytes = Buffer.from(sig, "base64url");
    if (bytes.toString("base64url") !== sig) return { ok: false, reason: "signature" };
    if (!verifyWith(null, Buffer.from(`${parts[0]}.${parts[1]}`), key.publicKey, bytes)) return { ok: false, reason: "signature" };
    return { appId: key.appId };
  }
  // Keyed by the signature segment, each entry holding its whole token: a map lookup hashes
  // its key, and the whole token is six times longer. A hit counts only when the whole token
  // is the same text, so another payload under a known signature is verified in full.
  const cache = new Map<string, { token: string; claims: AccessClaims }>();
  // The last 43 characters, all signature: any text of the token would do as the key, as
  // long as it is always the same one, and a hit still needs the whole token equal.
  const signatureOf = (token: string) => token.slice(-43);
  // The bearer check asks `known`, then `verify`, about the same token: the second finds it
  // here without hashing its key again.
  let last: { token: string; claims: AccessClaims } | undefined;

  function cached(token: string): AccessClaims | undefined {
    if (last !== undefined && last.token === token) return last.claims;
    const hit = cache.get(signatureOf(token));
    if (hit === undefined || hit.token !== token) return undefined;
    last = hit;
    return hit.claims;
  }

  return {
    issue(claims: Omit<AccessClaims, "iss" | "iat" | "exp">, nowMs: number, signer: TokenSigner): { token: string; exp: number } {
      const iat = Math.floor(nowMs / 1000);
      const exp = iat + ACCESS_TOKEN_TTL_SECONDS;
      const body = `${signer.header}.${Buffer.from(claimsJson(claims, iat, exp)).toString("base64url")}`;
      return { token: `${body}.${signWith(null, Buffer.from(body), signer.privateKey).toString("base64url")}`, exp };
    },
    /**
     * Whether `token` is one verified before (it may have expired since). Such a token is
     * base64url segments and dots only: the bearer header's parse takes it as it is.
     */
    known: (token: string): boolean => cached(token) !== undefined,
    verify(token: string, nowMs: number): VerifyResult {
      let claims = cached(token);
      if (!claims) {
        const parts = token.split(".");
        if (parts.length !== 3) return { ok: false, reason: "malformed" };
        const signed = checkSignature(parts, nowMs);
        if ("ok" in signed) return signed;
        // The payload was signed as sent; only its canonical form is read.
        if (!/^[A-Za-z0-9_-]+$/.test(parts[1]!)) return { ok: false, reason: "malformed" };
        try {
          claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as AccessClaims;
        } catch {
          return { ok: false, reason: "malformed" };
        }
        if (typeof claims.exp !== "number" || typeof claims.sub !== "string" || typeof claims.sid !== "string" || (claims.imp !== undefined && typeof claims.imp !== "string")) {
          return { ok: false, reason: "malformed" };
        }
        // A key signs its own app's tokens only.
        if (signed.appId !== null && claims.app !== signed.appId) return { ok: false, reason: "signature" };
        if (cache.size >= maxCached) cache.delete(cache.keys().next().value!);
        cache.set(signatureOf(token), { token, claims });
      }
      if (claims.exp * 1000 <= nowMs) {
        cache.delete(signatureOf(token));
        if (last?.token === token) last = undefined;
        return { ok: false, reason: "expired" };
      }
      return { ok: true, claims };
    },
    /** Tokens held in the cache. */
    get cached() {
      return cache.size;
    },
  };
}

export type AccessTokens = ReturnType<typeof createAccessTokens>;
