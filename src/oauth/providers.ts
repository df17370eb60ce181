import { Apple, Discord, Facebook, GitHub, Google, MicrosoftEntraId, Twitter, type OAuth2Tokens } from "arctic";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { openAppSecret, type OAuthProviderName } from "../apps/settings.ts";
import { fail } from "../errors.ts";
import { oidcAuthorizationUrl, oidcExchange } from "./oidc.ts";

/** A provider's settings for one app, secrets opened, with the callback URL to register. */
export interface ProviderConfig {
  clientId: string;
  clientSecret: string | null;
  tenant: string;
  teamId: string | null;
  keyId: string | null;
  privateKey: string | null;
  scopes: string[] | null;
  callbackUrl: string;
  /** oidc only */
  issuer: string | null;
  trustEmail: "claim" | "always" | "never";
}

interface ProviderDef {
  /** Settings fields that must be set besides clientId. */
  needs: ("clientSecret" | "teamId" | "keyId" | "privateKey" | "issuer")[];
  scopes: string[];
  pkce: boolean;
  /** The provider posts the callback as a form from its own site (a cross-site POST). */
  formPost: boolean;
  authorizationUrl(c: ProviderConfig, state: string, verifier: string | null, scopes: string[]): URL | Promise<URL>;
  /** `iss`: the callback's issuer parameter (RFC 9207), when the provider sent one. */
  exchange(c: ProviderConfig, code: string, verifier: string | null, iss?: string): Promise<OAuth2Tokens>;
}

/** Apple wants the PKCS#8 key as DER bytes; settings hold it as PEM text. */
function pemToDer(pem: string): Uint8Array {
  const body = pem.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, "");
  return new Uint8Array(Buffer.from(body, "base64"));
}

const secret = (c: ProviderConfig) => c.clientSecret!;

export const PROVIDERS: Record<OAuthProviderName, ProviderDef> = {
  google: {
    needs: ["clientSecret"],
    scopes: ["openid", "email"],
    pkce: true,
    formPost: false,
    authorizationUrl: (c, state, verifier, scopes) => new Google(c.clientId, secret(c), c.callbackUrl).createAuthorizationURL(state, verifier!, scopes),
    exchange: (c, code, verifier) => new Google(c.clientId, secret(c), c.callbackUrl).validateAuthorizationCode(code, verifier!),
  },
  github: {
    needs: ["clientSecret"],
    scopes: ["read:user", "user:email"],
    pkce: false,
    formPost: false,
    authorizationUrl: (c, state, _v, scopes) => new GitHub(c.clientId, secret(c), c.callbackUrl).createAuthorizationURL(state, scopes),
    exchange: (c, code) => new GitHub(c.clientId, secret(c), c.callbackUrl).validateAuthorizationCode(code),
  },
  apple: {
    needs: ["teamId", "keyId", "privateKey"],
    scopes: ["name", "email"],
    pkce: false,
    formPost: true,
    authorizationUrl: (c, state, _v, scopes) => {
      const url = apple(c).createAuthorizationURL(state, scopes);
      // Apple requires form_post whenever name or email is asked for.
      url.searchParams.set("response_mode", "form_post");
      return url;
    },
    exchange: (c, code) => apple(c).validateAuthorizationCode(code),
  },
  microsoft: {
    needs: ["clientSecret"],
    scopes: ["openid", "profile", "email"],
    pkce: true,
    formPost: false,
    authorizationUrl: (c, state, verifier, scopes) => microsoft(c).createAuthorizationURL(state, verifier!, scopes),
    exchange: (c, code, verifier) => microsoft(c).validateAuthorizationCode(code, verifier!),
  },
  facebook: {
    needs: ["clientSecret"],
    scopes: ["email", "public_profile"],
    pkce: false,
    formPost: false,
    authorizationUrl: (c, state, _v, scopes) => new Facebook(c.clientId, secret(c), c.callbackUrl).createAuthorizationURL(state, scopes),
    exchange: (c, code) => new Facebook(c.clientId, secret(c), c.callbackUrl).validateAuthorizationCode(code),
  },
  discord: {
    needs: ["clientSecret"],
    scopes: ["identify", "email"],
    pkce: true,
    formPost: false,
    authorizationUrl: (c, state, verifier, scopes) => new Discord(c.clientId, secret(c), c.callbackUrl).createAuthorizationURL(state, verifier, scopes),
    exchange: (c, code, verifier) => new Discord(c.clientId, secret(c), c.callbackUrl).validateAuthorizationCode(code, verifier),
  },
  twitter: {
    needs: ["clientSecret"],
    scopes: ["users.read", "tweet.read", "users.email"],
    pkce: true,
    formPost: false,
    authorizationUrl: (c, state, verifier, scopes) => new Twitter(c.clientId, secret(c), c.callbackUrl).createAuthorizationURL(state, verifier!, scopes),
    exchange: (c, code, verifier) => new Twitter(c.clientId, secret(c), c.callbackUrl).validateAuthorizationCode(code, verifier!),
  },
  oidc: {
    // A public client (no secret) is fine: PKCE binds the code to this flow.
    needs: ["issuer"],
    scopes: ["openid", "email"],
    pkce: true,
    formPost: false,
    authorizationUrl: (c, state, verifier, scopes) => oidcAuthorizationUrl(c, state, verifier!, scopes),
    exchange: (c, code, verifier, iss) => oidcExchange(c, code, verifier!, iss),
  },
};

function apple(c: ProviderConfig) {
  return new Apple(c.clientId, c.teamId!, c.keyId!, pemToDer(c.privateKey!), c.callbackUrl);
}
function microsoft(c: ProviderConfig) {
  return new MicrosoftEntraId(c.tenant, c.clientId, c.clientSecret, c.callbackUrl);
}

export function callbackUrl(core: Core, provider: OAuthProviderName): string {
  return `${core.config.publicUrl}/api/v1/auth/oauth/${provider}/callback`;
}

/** The provider's settings for the app, or 404 when it is not enabled or lacks a field. */
export function providerConfig(core: Core, app: AppRow, provider: OAuthProviderName): ProviderConfig {
  const s = app.settings.oauth.providers[provider];
  if (!s || !s.enabled) throw fail("not_found", `Sign-in with ${provider} is not enabled for this app. The developer sets it up with: tenantd oauth set --app ${app.id} --provider ${provider}`);
  const missing = PROVIDERS[provider].needs.filter((k) => !s[k]);
  if (missing.length > 0) throw fail("not_found", `Sign-in with ${provider} is not fully configured for this app: ${missing.join(", ")} missing.`);
  const open = (v: string | undefined) => (v === undefined ? null : core.secrets.isSealed(v) ? openAppSecret(core.secrets, v, app.id) : v);
  return {
    clientId: s.clientId,
    clientSecret: open(s.clientSecret),
    tenant: s.tenant ?? "common",
    teamId: s.teamId ?? null,
    keyId: s.keyId ?? null,
    privateKey: open(s.privateKey),
    scopes: s.scopes ?? null,
    callbackUrl: callbackUrl(core, provider),
    issuer: s.issuer ?? null,
    trustEmail: s.trustEmail ?? "claim",
  };
}
