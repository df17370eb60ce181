import { decodeIdToken, type OAuth2Tokens } from "arctic";
import type { OAuthProviderName } from "../apps/settings.ts";
import { fail } from "../errors.ts";
import type { ProviderConfig } from "./providers.ts";
import { oidcIdentity } from "./oidc.ts";

/** Who the provider says signed in. `emailVerified` is true only when the provider vouches for the email. */
export interface Identity {
  id: string;
  email: string | null;
  emailVerified: boolean;
}

/** Extra callback input: Apple posts a `user` JSON field (name, email) on the first sign-in only. */
export interface CallbackExtras {
  appleUser?: string;
  /** The issuer parameter of the callback (RFC 9207), checked for `oidc`. */
  iss?: string;
}

type Claims = Record<string, unknown>;
const IDENTITY_TIMEOUT_MS = 10_000;

const str = (v: unknown): string | null => (typeof v === "string" && v.trim() !== "" ? v.trim() : typeof v === "number" ? String(v) : null);
const normEmail = (v: unknown): string | null => {
  const s = str(v);
  return s && s.includes("@") && s.length <= 254 ? s.toLowerCase() : null;
};
/** Some providers send booleans as strings ("true"). */
const isTrue = (v: unknown) => v === true || v === "true";

async function getJson(url: string, accessToken: string, provider: string): Promise<any> {
  let res: Response;
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${accessToken}`, accept: "application/json", "user-agent": "tenantd" },
      signal: AbortSignal.timeout(IDENTITY_TIMEOUT_MS),
    });
  } catch {
    throw fail("provider_error", `${provider} could not be reached to read the account.`);
  }
  if (!res.ok) {
    await res.body?.cancel();
    throw fail("provider_error", `${provider} refused to share the account (HTTP ${res.status}).`);
  }
  try {
    return await res.json();
  } catch {
    throw fail("provider_error", `${provider} answered with something that is not JSON.`);
  }
}

/**
 * The id token came straight from the provider's token endpoint over TLS, so (as OpenID
 * Connect allows) its signature is not checked; issuer and audience are.
 */
function idTokenClaims(tokens: OAuth2Tokens, provider: string, clientId: string, issuer: (iss: string) => boolean): Claims {
  let claims: Claims;
  try {
    claims = decodeIdToken(tokens.idToken()) as Claims;
  } catch {
    throw fail("provider_error", `${provider} did not return a readable id token.`);
  }
  const aud = claims.aud;
  const audOk = aud === clientId || (Array.isArray(aud) && aud.includes(clientId));
  if (!audOk || typeof claims.iss !== "string" || !issuer(claims.iss) || !str(claims.sub)) {
    throw fail("provider_error", `${provider} returned an id token for another client or issuer.`);
  }
  return claims;
}

function fromClaims(claims: Claims, verified: boolean): Identity {
  const email = normEmail(claims.email);
  return { id: str(claims.sub)!, email, emailVerified: email !== null && verified };
}

function parseAppleUser(raw: string | undefined): string | null {
  if (!raw) return null;
  try {
    return normEmail((JSON.parse(raw) as { email?: unknown }).email);
  } catch {
    return null;
  }
}

type Reader = (tokens: OAuth2Tokens, c: ProviderConfig, extras: CallbackExtras) => Promise<Identity>;

const READERS: Record<OAuthProviderName, Reader> = {
  async google(tokens, c) {
    const claims = idTokenClaims(tokens, "Google", c.clientId, (iss) => iss === "https://accounts.google.com" || iss === "accounts.google.com");
    return fromClaims(claims, isTrue(claims.email_verified));
  },
  async github(tokens) {
    const token = tokens.accessToken();
    const user = await getJson("https://api.github.com/user", token, "GitHub");
    const id = str(user?.id);
    if (!id) throw fail("provider_error", "GitHub did not say which account signed in.");
    // /user shows only a public email; /user/emails says which one is primary and verified.
    const emails = await getJson("https://api.github.com/user/emails", token, "GitHub");
    const primary = Array.isArray(emails) ? emails.find((e) => e && e.primary === true) : undefined;
    const email = normEmail(primary?.email) ?? normEmail(user.email);
    return { id, email, emailVerified: email !== null && primary !== undefined && normEmail(primary.email) === email && primary.verified === true };
  },
  async apple(tokens, c, extras) {
    const claims = idTokenClaims(tokens, "Apple", c.clientId, (iss) => iss === "https://appleid.apple.com");
    const fromToken = fromClaims(claims, isTrue(claims.email_verified));
    if (fromToken.email) return fromToken;
    // The `user` form field is not signed: its email never counts as verified.
    return { ...fromToken, email: parseAppleUser(extras.appleUser), emailVerified: false };
  },
  async microsoft(tokens, c) {
    const claims = idTokenClaims(tokens, "Microsoft", c.clientId, (iss) => iss.startsWith("https://login.microsoftonline.com/"));
    // Entra's `email` claim is whatever the account's own directory admin typed in; only the
    // optional claim `xms_edov` (email domain owner verified) vouches for it.
    return fromClaims(claims, isTrue(claims.xms_edov));
  },
  async facebook(tokens) {
    const me = await getJson("https://graph.facebook.com/me?fields=id,email", tokens.accessToken(), "Facebook");
    const id = str(me?.id);
    if (!id) throw fail("provider_error", "Facebook did not say which account signed in.");
    const email = normEmail(me.email);
    // The Graph API has no verified flag and does not promise the email was confirmed.
    return { id, email, emailVerified: false };
  },
  async discord(tokens) {
    const me = await getJson("https://discord.com/api/users/@me", tokens.accessToken(), "Discord");
    const id = str(me?.id);
    if (!id) throw fail("provider_error", "Discord did not say which account signed in.");
    const email = normEmail(me.email);
    return { id, email, emailVerified: email !== null && me.verified === true };
  },
  async twitter(tokens) {
    const me = await getJson("https://api.x.com/2/users/me?user.fields=confirmed_email", tokens.accessToken(), "X");
    const id = str(me?.data?.id);
    if (!id) throw fail("provider_error", "X did not say which account signed in.");
    // X returns `confirmed_email` only when the app has email access and users.email was granted.
    const email = normEmail(me.data.confirmed_email);
    return { id, email, emailVerified: email !== null };
  },
  async oidc(tokens, c) {
    return oidcIdentity(tokens, c);
  },
};

export function readIdentity(provider: OAuthProviderName, tokens: OAuth2Tokens, c: ProviderConfig, extras: CallbackExtras): Promise<Identity> {
  return READERS[provider](tokens, c, extras);
}
