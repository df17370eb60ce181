import * as oauth from "oauth4webapi";
import { hash } from "node:crypto";
import { decodeIdToken, OAuth2Tokens } from "arctic";
import { fail } from "../errors.ts";
import type { Identity } from "./identity.ts";
import type { ProviderConfig } from "./providers.ts";

/** How long an issuer's discovery document is kept before it is read again. */
export const DISCOVERY_TTL_MS = 60 * 60 * 1000;
const TIMEOUT_MS = 10_000;

const discovered = new Map<string, { as: Promise<oauth.AuthorizationServer>; at: number }>();

/** The issuer's metadata, from its discovery document (OpenID Connect Discovery 1.0), kept an hour. */
function authorizationServer(issuer: string): Promise<oauth.AuthorizationServer> {
  const held = discovered.get(issuer);
  if (held && Date.now() - held.at < DISCOVERY_TTL_MS) return held.as;
  const url = new URL(issuer);
  const as = oauth
    .discoveryRequest(url, { algorithm: "oidc", signal: AbortSignal.timeout(TIMEOUT_MS) })
    .then((res) => oauth.processDiscoveryResponse(url, res))
    .catch((e: unknown) => {
      discovered.delete(issuer);
      throw fail("provider_error", `The OpenID Connect issuer ${issuer} did not serve a valid discovery document (${reason(e)}).`);
    });
  if (discovered.size >= 100) discovered.clear();
  discovered.set(issuer, { as, at: Date.now() });
  return as;
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The nonce of a flow, derived from its PKCE verifier: as unguessable, kept (sealed) in the
 * same state row, and bound to the flow that sent it without another column.
 */
export function nonceOf(verifier: string): string {
  return hash("sha256", `tenantd-oidc-nonce:${verifier}`, "base64url");
}

function clientAuth(as: oauth.AuthorizationServer, c: ProviderConfig): oauth.ClientAuth {
  if (!c.clientSecret) return oauth.None();
  const methods = as.token_endpoint_auth_methods_supported;
  // Basic is the default an issuer must support when it lists nothing.
  return methods && !methods.includes("client_secret_basic") && methods.includes("client_secret_post") ? oauth.ClientSecretPost(c.clientSecret) : oauth.ClientSecretBasic(c.clientSecret);
}

export async function oidcAuthorizationUrl(c: ProviderConfig, state: string, verifier: string, scopes: string[]): Promise<URL> {
  const as = await authorizationServer(c.issuer!);
  if (!as.authorization_endpoint) throw fail("provider_error", `The OpenID Connect issuer ${c.issuer} names no authorization endpoint.`);
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", c.clientId);
  url.searchParams.set("redirect_uri", c.callbackUrl);
  url.searchParams.set("scope", scopes.join(" "));
  url.searchParams.set("state", state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  url.searchParams.set("nonce", nonceOf(verifier));
  return url;
}

/**
 * Exchanges the code and validates the ID token: issuer, audience, expiry, nonce (this flow's),
 * and its signature against the issuer's JWKS. Any failure is a provider_error naming why.
 */
export async function oidcExchange(c: ProviderConfig, code: string, verifier: string, iss: string | undefined): Promise<OAuth2Tokens> {
  const as = await authorizationServer(c.issuer!);
  const client: oauth.Client = { client_id: c.clientId };
  try {
    // State was checked by tenantd against its own row; `iss` (RFC 9207) is checked when sent.
    const params = oauth.validateAuthResponse(as, client, new URLSearchParams({ code, ...(iss !== undefined && { iss }) }), oauth.skipStateCheck);
    const response = await oauth.authorizationCodeGrantRequest(as, client, clientAuth(as, c), params, c.callbackUrl, verifier, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonceOf(verifier), requireIdToken: true });
    // Not required over TLS by OpenID Connect, checked all the same: a token endpoint answer
    // that went astray (a proxy, a misconfigured issuer) does not sign anyone in.
    await oauth.validateApplicationLevelSignature(as, response, { signal: AbortSignal.timeout(TIMEOUT_MS) });
    return new OAuth2Tokens(result);
  } catch (e) {
    throw fail("provider_error", `The OpenID Connect issuer ${c.issuer} did not complete the sign-in: ${reason(e)}`);
  }
}

/** Who signed in, from the validated ID token; the email is trusted as the app's setting says. */
export function oidcIdentity(tokens: OAuth2Tokens, c: ProviderConfig): Identity {
  const claims = decodeIdToken(tokens.idToken()) as Record<string, unknown>;
  const raw = typeof claims.email === "string" ? claims.email.trim().toLowerCase() : "";
  const email = raw.includes("@") && raw.length <= 254 ? raw : null;
  const vouched = c.trustEmail === "always" || (c.trustEmail === "claim" && (claims.email_verified === true || claims.email_verified === "true"));
  return { id: String(claims.sub), email, emailVerified: email !== null && vouched };
}
