import type { OAuthProviderName } from "../apps/settings.ts";

/** One cookie per provider, scoped to that provider's start and callback paths. */
export const cookieName = (provider: OAuthProviderName) => `tenantd_oauth_${provider}`;

/**
 * The browser-binding cookie. SameSite=Lax lets the top-level GET callback carry it;
 * Apple's callback is a cross-site form POST, which only a SameSite=None cookie survives,
 * and browsers accept SameSite=None only with Secure.
 */
export function bindingCookie(opts: { provider: OAuthProviderName; value: string; path: string; secure: boolean; crossSitePost: boolean; maxAgeSeconds: number }): string {
  const parts = [`${cookieName(opts.provider)}=${opts.value}`, `Path=${opts.path}`, `Max-Age=${opts.maxAgeSeconds}`, "HttpOnly"];
  if (opts.crossSitePost) parts.push("SameSite=None", "Secure");
  else {
    parts.push("SameSite=Lax");
    if (opts.secure) parts.push("Secure");
  }
  return parts.join("; ");
}

export function readCookie(header: string | null, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
