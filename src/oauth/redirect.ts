import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";

function parse(raw: string): URL | null {
  try {
    const url = new URL(raw);
    return url.protocol === "https:" || url.protocol === "http:" ? url : null;
  } catch {
    return null;
  }
}

/**
 * Checks `redirect` against the app's `settings.oauth.redirectUrls`. An entry matches the
 * exact URL (query included); an entry whose path ends in `/` and has no query also matches
 * any URL of the same origin below that path. No credentials in the URL, no fragment: the
 * fragment is where the tokens go.
 */
export function allowedRedirect(app: AppRow, raw: string | undefined): string {
  if (!raw) throw fail("invalid_redirect", "Missing redirect: pass the URL to return to as ?redirect=, one of the app's oauth.redirectUrls.");
  const url = parse(raw);
  if (!url || url.hash !== "" || raw.includes("#") || url.username !== "" || url.password !== "") {
    throw fail("invalid_redirect", "redirect must be an absolute http(s) URL without a #fragment or credentials.");
  }
  const ok = app.settings.oauth.redirectUrls.some((entry) => {
    const allowed = parse(entry);
    if (!allowed) return false;
    if (allowed.href === url.href) return true;
    return allowed.pathname.endsWith("/") && allowed.search === "" && allowed.hash === "" && allowed.origin === url.origin && url.pathname.startsWith(allowed.pathname);
  });
  if (!ok) throw fail("invalid_redirect", `redirect ${url.href} is not on this app's allow-list (settings.oauth.redirectUrls). The developer adds it with: tenantd oauth redirects --app ${app.id} --add <url>`);
  return url.href;
}

/** The browser goes back to the app with the outcome in the fragment, never sent to a server. */
export function withFragment(redirect: string, values: Record<string, string>): string {
  return `${redirect}#${Object.entries(values).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`;
}
