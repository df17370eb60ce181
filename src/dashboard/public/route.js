// The route lives in the hash: `#/apps/app_1/tenants?email=a&offset=25`. The part after `?`
// holds a page's view state (search, filters, sort, page), so Back, reload and a shared link
// all show the same view.
import { useState, useEffect } from "./vendor/preact-htm.js";

const decode = (s) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** `#/apps/app_1/tenants?email=a` → { path: ["apps", "app_1", "tenants"], query: { email: "a" } } */
export function parseHash(hash = location.hash) {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const path = (q === -1 ? raw : raw.slice(0, q)).split("/").filter(Boolean).map(decode);
  return { path, query: Object.fromEntries(new URLSearchParams(q === -1 ? "" : raw.slice(q + 1))) };
}

let focusRequested = false;
/** The next page heading to mount takes the focus (set on a route change, not on a filter change). */
export const requestHeadingFocus = () => (focusRequested = true);
export function takeHeadingFocus() {
  const was = focusRequested;
  focusRequested = false;
  return was;
}

export function useRoute() {
  const [route, setRoute] = useState(parseHash);
  useEffect(() => {
    let key = parseHash().path.join("/");
    const on = () => {
      const next = parseHash();
      if (next.path.join("/") !== key) requestHeadingFocus();
      key = next.path.join("/");
      setRoute(next);
    };
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

const read = (defaults) => {
  const { query } = parseHash();
  const out = { ...defaults };
  for (const [k, d] of Object.entries(defaults)) {
    if (query[k] === undefined) continue;
    out[k] = typeof d === "number" ? Math.max(0, Math.floor(Number(query[k])) || 0) : query[k];
  }
  return out;
};

/**
 * A page's view state kept in the URL: `[query, setQuery]` like useState, where setting
 * pushes a history entry (Back returns to the previous view). Values equal to their default
 * stay out of the URL.
 */
export function useHashQuery(defaults) {
  const [query, setQuery] = useState(() => read(defaults));
  useEffect(() => {
    const on = () => setQuery(read(defaults));
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  const set = (next) => {
    const p = new URLSearchParams();
    for (const [k, v] of Object.entries(next)) if (k in defaults && v !== "" && v !== null && v !== undefined && String(v) !== String(defaults[k])) p.set(k, String(v));
    const path = parseHash().path.map(encodeURIComponent).join("/");
    const search = p.toString();
    location.hash = `#/${path}${search ? `?${search}` : ""}`;
  };
  return [query, set];
}
