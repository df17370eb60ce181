// Talks to the dashboard's own routes: the session, and api/… which the server forwards to
// the admin API with the session cookie's token. Page scripts never see that token.
const base = new URL("../", import.meta.url);
let csrf = null;
let onSignedOut = () => {};

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function setSignedOutHandler(fn) {
  onSignedOut = fn;
}

async function send(method, url, body) {
  const headers = {};
  if (body !== undefined) headers["content-type"] = "application/json";
  if (csrf && method !== "GET") headers["x-dashboard-csrf"] = csrf;
  let res;
  try {
    res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  } catch {
    throw new ApiError(0, "network", "The server did not answer: is tenantd still running?");
  }
  const text = await res.text();
  let data = null;
  try {
    data = text ? JSON.parse(text) : null;
  } catch {
    // A proxy's or host's HTML error page: say what happened, not "Unexpected token <".
    throw new ApiError(res.status, "not_json", `The server answered ${res.status} ${res.statusText || ""} with a page that is not the dashboard's API (a proxy in front of tenantd?). Try again, or check the server's logs.`.replace("  ", " "));
  }
  if (!res.ok) {
    if (res.status === 401 && url.pathname.includes("/api/")) onSignedOut("Your dashboard session ended (it expired, or you signed out elsewhere): sign in again.");
    throw new ApiError(res.status, data?.error ?? "error", data?.message ?? `Request failed with status ${res.status}.`);
  }
  return data;
}

/** A call to the admin API: `api("GET", "admin/apps")`. */
export const api = (method, path, body) => send(method, new URL(`api/${path}`, base), body);

export async function getSession() {
  const s = await send("GET", new URL("session", base));
  csrf = s.csrfToken ?? null;
  return s;
}

export async function signIn(email, password) {
  const s = await send("POST", new URL("session", base), { email, password });
  csrf = s.csrfToken;
  return s;
}

export async function signOut() {
  await send("DELETE", new URL("session", base));
  csrf = null;
}

/** The server's own OpenAPI document (beside the dashboard's path, so a mount prefix carries over): nothing from a CDN. */
export const openApiUrl = new URL("../api/v1/openapi.json", base);

/** URL of a file preview (same-origin, through the dashboard's forwarder). */
export const previewUrl = (appId, tenantId, fileId) =>
  new URL(`api/admin/apps/${appId}/tenants/${encodeURIComponent(tenantId)}/files/${fileId}/preview`, base).href;

/** Query string from an object, leaving out empty values. */
export function qs(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== "") p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : "";
}

/**
 * A read of the tenant API as the tenant, with an impersonation session's bearer (never the
 * dashboard's cookie): what the tenant's own app gets from the same call.
 */
export async function asTenant(session, path) {
  let res;
  try {
    res = await fetch(new URL(`../api/v1/${path}`, base), { headers: { authorization: `Bearer ${session.accessToken}`, "x-service-app": session.appId }, credentials: "omit" });
  } catch {
    throw new ApiError(0, "network", "The server did not answer: is tenantd still running?");
  }
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data?.error ?? "error", data?.message ?? `Request failed with status ${res.status}.`);
  return data;
}

/** The address of an admin API path through the dashboard's forwarder (a link the browser opens itself). */
export const apiUrl = (path) => new URL(`api/${path}`, base).href;
