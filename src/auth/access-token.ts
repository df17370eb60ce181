import { timingSafeEqual } from "node:crypto";
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
  iat: number;
  exp: number;
}

// The only header tenantd issues. A token whose header differs (alg "none", RS256, …) is refused
// by comparison, before any signature is computed: no algorithm switching.
const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");

/**
 * The claims' JSON, in `AccessClaims` order, written field by field: JSON.stringify of the
 * whole object cost about 7,500 instructions of every refresh (count.sh), most of it walking
 * the object rather than escaping its four short strings.
 */
function claimsJson(claims: Omit<AccessClaims, "iss" | "iat" | "exp">, iat: number, exp: number): string {
  const pid = claims.pid == null ? "null" : jsonString(claims.pid);
  return `{"iss":"tenantd","sub":${jsonString(claims.sub)},"app":${jsonString(claims.app)},"sid":${jsonString(claims.sid)},"pid":${pid},"iat":${iat},"exp":${exp}}`;
}

export type VerifyResult = { ok: true; claims: AccessClaims } | { ok: false; reason: "malformed" | "signature" | "expired" };

/**
 * Verified tokens kept in memory (the session-state cache's bound): past it the earliest
 * verified go first. A token lives 15 minutes, so this bounds the tenants active at once
 * whose requests skip the HMAC; emptying the whole cache when full, as before, made every
 * token a miss once more tenants than the bound took turns (a list over 10,000 tenants).
 */
export const ACCESS_TOKEN_CACHE_SIZE = 50_000;

/** HS256 access tokens with a cache of verified tokens (verification sits on every request). */
export function createAccessTokens(key: Buffer, maxCached = ACCESS_TOKEN_CACHE_SIZE) {
  const hmac = hmacSha256(key);
  const sign = (data: string) => hmac(data, "base64url");
  // Keyed by the signature segment, each entry holding its whole token: a map lookup hashes
  // its key, and the whole token is six times longer. A hit counts only when the whole token
  // is the same text, so another payload under a known signature is verified in full.
  const cache = new Map<string, { token: string; claims: AccessClaims }>();
  // An HS256 signature is the last 43 characters after a dot: taken without searching for
  // the dot (String#lastIndexOf is a slow runtime call). Any text of the token would do as
  // the key, as long as it is always the same one: a hit still needs the whole token equal.
  const signatureOf = (token: string) => (token.charCodeAt(token.length - 44) === 46 ? token.slice(-43) : token.slice(token.lastIndexOf(".") + 1));
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
    issue(claims: Omit<AccessClaims, "iss" | "iat" | "exp">, nowMs: number): { token: string; exp: number } {
      const iat = Math.floor(nowMs / 1000);
      const exp = iat + ACCESS_TOKEN_TTL_SECONDS;
      const body = `${HEADER}.${Buffer.from(claimsJson(claims, iat, exp)).toString("base64url")}`;
      return { token: `${body}.${sign(body)}`, exp };
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
        if (parts.length !== 3 || parts[0] !== HEADER) return { ok: false, reason: "malformed" };
        // Compared as text against the canonical encoding: a lenient decode would accept
        // endless spellings of one signature ("+/" for "-_", trailing junk, padding).
        const given = Buffer.from(parts[2]!, "utf8");
        const expected = Buffer.from(sign(`${parts[0]}.${parts[1]}`), "utf8");
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: "signature" };
        // The payload was signed as sent; only its canonical form is read.
        if (!/^[A-Za-z0-9_-]+$/.test(parts[1]!)) return { ok: false, reason: "malformed" };
        try {
          claims = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as AccessClaims;
        } catch {
          return { ok: false, reason: "malformed" };
        }
        if (typeof claims.exp !== "number" || typeof claims.sub !== "string" || typeof claims.sid !== "string") {
          return { ok: false, reason: "malformed" };
        }
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
