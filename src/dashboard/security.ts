import { createHmac } from "node:crypto";
import type { H3Event } from "h3";
import { fail } from "../errors.ts";
import { constantTimeEqual } from "../crypto/random.ts";
import type { Core } from "../core.ts";

export const COOKIE = "tenantd_dashboard";
export const CSRF_HEADER = "x-dashboard-csrf";

/**
 * No inline script or style anywhere; the page talks only to its own origin, and no other
 * site may frame it (clickjacking on destructive buttons).
 */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' blob:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** Headers on every dashboard response. */
export function secureHeaders(headers: Headers): void {
  headers.set("content-security-policy", CSP);
  headers.set("x-content-type-options", "nosniff");
  headers.set("x-frame-options", "DENY");
  headers.set("referrer-policy", "no-referrer");
  headers.set("cross-origin-opener-policy", "same-origin");
  headers.set("cross-origin-resource-policy", "same-origin");
}

/** The developer session token in the dashboard cookie, if any. */
export function sessionToken(event: H3Event): string | undefined {
  const header = event.req.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [k, ...rest] = part.trim().split("=");
    if (k === COOKIE) return decodeURIComponent(rest.join("="));
  }
  return undefined;
}

/** Whether the browser reached us over HTTPS (directly, or through a proxy we are told to trust). */
function isHttps(event: H3Event, core: Core): boolean {
  if (event.url.protocol === "https:") return true;
  return core.config.trustProxy && event.req.headers.get("x-forwarded-proto")?.split(",")[0]?.trim() === "https";
}

export function sessionCookie(event: H3Event, core: Core, cookiePath: string, token: string, maxAgeSeconds: number): string {
  const secure = isHttps(event, core) ? "; Secure" : "";
  return `${COOKIE}=${encodeURIComponent(token)}; Path=${cookiePath}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${secure}`;
}

/**
 * The CSRF token of a session: an HMAC of the session token's hash under a key derived from
 * the server key. Page scripts can read it (from GET session) but not the cookie; a forged
 * cross-site request can read neither.
 */
export function csrfToken(core: Core, tokenHash: string): string {
  return createHmac("sha256", core.secrets.deriveKey("dashboard-csrf")).update(tokenHash).digest("base64url");
}

/**
 * A state-changing call must come from a page of this very origin (the `Origin` header
 * browsers send on every POST/PUT/PATCH/DELETE), and, when signed in, carry the CSRF token.
 */
export function requireSameOrigin(event: H3Event, core: Core): void {
  const origin = event.req.headers.get("origin");
  const forwardedHost = core.config.trustProxy ? event.req.headers.get("x-forwarded-host")?.split(",")[0]?.trim() : undefined;
  const host = forwardedHost || event.req.headers.get("host") || event.url.host;
  let originHost: string | undefined;
  try {
    originHost = origin && origin !== "null" ? new URL(origin).host : undefined;
  } catch {
    originHost = undefined;
  }
  if (!originHost || originHost !== host) {
    throw fail("forbidden", "Cross-site request refused: dashboard changes must come from the dashboard page itself (the Origin header does not match this server).");
  }
}

export function requireCsrf(event: H3Event, core: Core, tokenHash: string): void {
  requireSameOrigin(event, core);
  const given = event.req.headers.get(CSRF_HEADER);
  if (!given || !constantTimeEqual(given, csrfToken(core, tokenHash))) {
    throw fail("forbidden", `Missing or wrong ${CSRF_HEADER} header: reload the dashboard page and try again.`);
  }
}
