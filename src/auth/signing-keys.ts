import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";
import type { Awaitable } from "../awaitable.ts";
import type { Clock } from "../clock.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import { newId } from "../crypto/random.ts";
import type { SigningKeysRepository } from "../db/repositories.ts";
import type { SigningKeyRow } from "../db/types.ts";
import { ACCESS_TOKEN_TTL_SECONDS, KID_PATTERN, tokenHeader, type TokenSigner, type TokenVerifier } from "./access-token.ts";

/** How often a node reads its apps' current keys again: a rotation on another node reaches it within this. */
export const KEY_RELOAD_MS = 60_000;

/**
 * How long a retired key keeps verifying: every token it signed has expired by then, counting
 * the tokens a node that had not yet read the rotation signed with it.
 */
export const RETIRED_KEY_OVERLAP_MS = ACCESS_TOKEN_TTL_SECONDS * 1000 + 2 * KEY_RELOAD_MS;

/** A public key as a JWK of the app's JWKS (RFC 8037). */
export interface PublicJwk {
  kty: "OKP";
  crv: "Ed25519";
  alg: "EdDSA";
  use: "sig";
  kid: string;
  x: string;
}

const sealContext = (appId: string, kid: string) => `${appId}:${kid}`;

/**
 * Each app's Ed25519 access-token keys: made on the app's first token, sealed at rest under
 * the server key, kept in memory, rotated with an overlap so no token breaks.
 */
export function createSigningKeys(db: SigningKeysRepository, secrets: SecretBox, clock: Clock) {
  const signers = new Map<string, { signer: TokenSigner; loadedAt: number }>();
  const verifiers = new Map<string, TokenVerifier>();
  const loading = new Map<string, Promise<TokenSigner>>();

  function newKey(appId: string, now: number): SigningKeyRow {
    const kid = newId("key");
    const { publicKey, privateKey } = generateKeyPairSync("ed25519");
    return {
      kid,
      appId,
      publicKey: publicKey.export({ format: "jwk" }).x!,
      privateKeySealed: secrets.seal(privateKey.export({ format: "der", type: "pkcs8" }).toString("base64url"), sealContext(appId, kid)),
      createdAt: now,
      retiredAt: null,
    };
  }

  function remember(row: SigningKeyRow): void {
    verifiers.set(row.kid, {
      appId: row.appId,
      publicKey: createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: row.publicKey }, format: "jwk" }),
      verifiesUntil: row.retiredAt === null ? null : row.retiredAt + RETIRED_KEY_OVERLAP_MS,
    });
  }

  async function load(appId: string): Promise<TokenSigner> {
    const rows = await db.listForApp(appId);
    let current = rows.find((r) => r.retiredAt === null);
    if (!current) current = await db.insertFirst(newKey(appId, clock()));
    for (const row of rows) remember(row);
    remember(current);
    const der = Buffer.from(secrets.open(current.privateKeySealed, sealContext(appId, current.kid)), "base64url");
    const signer = { kid: current.kid, header: tokenHeader(current.kid), privateKey: createPrivateKey({ key: der, format: "der", type: "pkcs8" }) };
    signers.set(appId, { signer, loadedAt: clock() });
    return signer;
  }

  return {
    /** The app's current key: from memory, read again every KEY_RELOAD_MS, made on first use. */
    signer(appId: string): Awaitable<TokenSigner> {
      const held = signers.get(appId);
      if (held && clock() - held.loadedAt < KEY_RELOAD_MS) return held.signer;
      let pending = loading.get(appId);
      if (!pending) {
        pending = load(appId).finally(() => loading.delete(appId));
        loading.set(appId, pending);
      }
      // A reload that fails (the database away a moment) keeps the key in hand.
      return held ? pending.catch(() => held.signer) : pending;
    },
    /** A key loaded in this process (access-token.ts verifies with it). */
    verifier: (kid: string): TokenVerifier | undefined => verifiers.get(kid),
    /** Reads a key this process has not met (made by another node); false when there is none. */
    async loadKid(kid: string): Promise<boolean> {
      if (!KID_PATTERN.test(kid)) return false;
      const row = await db.findByKid(kid);
      if (row) remember(row);
      return row !== undefined;
    },
    /** The public keys that verify the app's tokens now: the current one and those retired within the overlap. */
    async jwks(appId: string): Promise<{ keys: PublicJwk[] }> {
      await this.signer(appId);
      const now = clock();
      const rows = await db.listForApp(appId);
      return {
        keys: rows
          .filter((r) => r.retiredAt === null || r.retiredAt + RETIRED_KEY_OVERLAP_MS > now)
          .map((r) => ({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: r.kid, x: r.publicKey })),
      };
    },
    /**
     * Makes a new key current. The old one keeps verifying for RETIRED_KEY_OVERLAP_MS, so no
     * session notices; keys retired longer ago than that are dropped.
     */
    async rotate(appId: string): Promise<{ kid: string; previousKid: string | null }> {
      const previous = (await db.listForApp(appId)).find((r) => r.retiredAt === null);
      const now = clock();
      const key = newKey(appId, now);
      await db.rotate(key, now - RETIRED_KEY_OVERLAP_MS);
      signers.delete(appId);
      await this.signer(appId);
      return { kid: key.kid, previousKid: previous?.kid ?? null };
    },
  };
}

export type SigningKeys = ReturnType<typeof createSigningKeys>;
