import { hmacSha256 } from "../crypto/hmac.ts";
import { newId, newToken, hashToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import type { Core } from "../core.ts";
import type { AppRow, NewSession, TenantRow } from "../db/types.ts";
import { ACCESS_TOKEN_TTL_SECONDS } from "./access-token.ts";
import { jsonString } from "../tools/json-string.ts";
import { andThen, type Awaitable } from "../awaitable.ts";

export const REFRESH_TTL_SECONDS = 90 * 24 * 3600;
/** Default for `refreshReuseGraceSeconds`: long enough for tabs refreshing at once, short for a thief. */
export const REFRESH_REUSE_GRACE_SECONDS = 5;

export interface TokenPair {
  accessToken: string;
  refreshToken: string;
  expiresIn: number;
  refreshExpiresIn: number;
}

export function newSession(now: number, authMethods?: string): { session: NewSession; refreshToken: string } {
  const refreshToken = newToken("rt");
  return {
    refreshToken,
    session: { id: newId("ses"), refreshHash: hashToken(refreshToken), createdAt: now, expiresAt: now + REFRESH_TTL_SECONDS * 1000, authMethods },
  };
}

/** Signed with the app's current key: at once when this process holds it (src/awaitable.ts). */
export function tokenPair(core: Core, tenant: Pick<TenantRow, "id" | "appId" | "parentTenantId">, sessionId: string, refreshToken: string): Awaitable<TokenPair> {
  return andThen(core.signingKeys.signer(tenant.appId), (signer) => ({
    accessToken: core.accessTokens.issue({ sub: tenant.id, app: tenant.appId, sid: sessionId, pid: tenant.parentTenantId }, core.clock(), signer).token,
    refreshToken,
    expiresIn: ACCESS_TOKEN_TTL_SECONDS,
    refreshExpiresIn: REFRESH_TTL_SECONDS,
  }));
}

/**
 * The refresh reply's JSON, written by hand: JSON.stringify walked every character of the
 * access token, about 13,000 instructions of each refresh (count.sh). An access token is
 * base64url and dots by construction; a refresh token that is not (one sealed by an older
 * version) goes through JSON.stringify.
 */
export function tokenPairJson(pair: TokenPair): string {
  return `{"accessToken":"${pair.accessToken}","refreshToken":${jsonString(pair.refreshToken)},"expiresIn":${pair.expiresIn},"refreshExpiresIn":${pair.refreshExpiresIn}}`;
}

export const signInDisabled = () => fail("forbidden", "Sign-in is turned off for this account by the app's administrator. Contact the app's support.");

/**
 * Starts a new session for an existing tenant (family join; sign-ins go through
 * sign-in-finish.ts). `authMethods` says how it signed in ("password+totp"), for step-up.
 */
export async function startSession(core: Core, tenant: TenantRow, authMethods?: string): Promise<TokenPair> {
  // Every sign-in path passes here, after its credentials checked out (so this says nothing to a guesser).
  if ((await core.db.admin.signInDisabledAt(tenant.id)) !== null) throw signInDisabled();
  const { session, refreshToken } = newSession(core.clock(), authMethods);
  await core.db.sessions.create(tenant.id, tenant.appId, session);
  return tokenPair(core, tenant, session.id, refreshToken);
}

const successorMacs = new WeakMap<Core, ReturnType<typeof hmacSha256>>();

/**
 * The token that follows `refreshToken` in its chain: an HMAC of it under a key derived from
 * the server key. Derived instead of random, so a repeat within the grace window is handed
 * the same successor without the successor being kept anywhere, sealed or not; as
 * unguessable as a random one to anyone without both the old token and the server key.
 */
export function successorToken(core: Core, refreshToken: string): string {
  let hmac = successorMacs.get(core);
  if (!hmac) successorMacs.set(core, (hmac = hmacSha256(core.secrets.deriveKey("refresh-successor"))));
  return `rt_${hmac(refreshToken, "base64url")}`;
}

/**
 * Rotates a refresh token. A repeat of the same token within the grace window (two tabs
 * refreshing at once) gets the successor already issued; any other reuse ends the session.
 * `requestId` goes on the reuse warning, for a caller running without AsyncLocalStorage.
 */
export async function refreshSession(core: Core, app: AppRow, refreshToken: string, requestId?: string): Promise<TokenPair> {
  const now = core.clock();
  let next = successorToken(core, refreshToken);
  const outcome = await core.db.sessions.rotate(hashToken(refreshToken), {
    appId: app.id,
    hash: hashToken(next),
    now,
    expiresAt: now + REFRESH_TTL_SECONDS * 1000,
    graceMs: (core.config.refreshReuseGraceSeconds ?? REFRESH_REUSE_GRACE_SECONDS) * 1000,
  });
  switch (outcome.kind) {
    case "unknown":
      throw fail("invalid_credentials", "Unknown refresh token. Sign in again.");
    case "ended":
      throw fail("session_ended", "This session has ended. Sign in again.");
    case "expired":
      throw fail("session_ended", "This session expired after 90 days without a refresh. Sign in again.");
    case "reused":
      core.log.warn("refresh token reuse: session ended", { sessionId: outcome.session.id, appId: outcome.session.appId, ...(requestId && { requestId }) });
      throw fail("session_ended", "This refresh token was already used, so the session was ended to protect the account. Sign in again.");
    case "repeat":
      // Rotated by a version that stored a random successor sealed: that one was issued.
      if (outcome.sealedSuccessor !== null) next = core.secrets.open(outcome.sealedSuccessor, app.id);
  }
  const { session, parentTenantId } = outcome;
  return tokenPair(core, { id: session.tenantId, appId: session.appId, parentTenantId }, session.id, next);
}
