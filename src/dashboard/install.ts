import type { H3, H3Event } from "h3";
import type { Core } from "../core.ts";
import { fail } from "../errors.ts";
import { loadAssets, type Asset } from "./assets.ts";
import { secureHeaders } from "./security.ts";
import { registerSessionRoutes } from "./session.ts";
import { forwardToAdminApi } from "./proxy.ts";

/**
 * Serves the developer dashboard under `config.dashboard.path` (default `/_`): its static
 * assets, a cookie session over the developer sessions, and `<path>/api/…`, which forwards to
 * the admin API with the session's bearer token. A separate route prefix: API requests never
 * pass through any of this.
 */
export function installDashboard(h3: H3, core: Core): void {
  const option = core.config.dashboard;
  if (!option) return;
  const path = option.path;
  const assets = loadAssets();
  // A failed bundle shows on the dashboard's own requests, not as an unhandled rejection.
  assets.catch(() => {});

  // h3 matches `/_` and `/_/` alike; relative asset URLs need the slash.
  h3.get(path, async (event) => (event.url.pathname.endsWith("/") ? sendAsset(event, (await assets).get("index.html")!) : redirectTo(event, `${event.url.pathname}/`)));
  h3.get(`${path}/assets/**`, async (event) => {
    const name = safeDecode(event.url.pathname.slice(event.url.pathname.lastIndexOf(`${path}/assets/`) + path.length + 8));
    const asset = name === undefined ? undefined : (await assets).get(name);
    if (!asset || name === "index.html") throw fail("not_found", `No dashboard asset ${name ?? "with that name"}.`);
    return sendAsset(event, asset);
  });
  registerSessionRoutes(h3, core, path);
  h3.all(`${path}/api/**`, (event) => forwardToAdminApi(h3, core, event));
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function redirectTo(event: H3Event, location: string): Response {
  const headers = new Headers({ location });
  secureHeaders(headers);
  return new Response(null, { status: 308, headers });
}

function sendAsset(event: H3Event, asset: Asset): Response {
  const cache = asset.immutable ? "public, max-age=31536000, immutable" : "no-cache";
  const headers = new Headers({ "content-type": asset.type, etag: asset.etag, "cache-control": cache, vary: "accept-encoding" });
  secureHeaders(headers);
  if (event.req.headers.get("if-none-match") === asset.etag) return new Response(null, { status: 304, headers });
  const gzip = /\bgzip\b/.test(event.req.headers.get("accept-encoding") ?? "");
  if (gzip) headers.set("content-encoding", "gzip");
  const body = gzip ? asset.gzip : asset.body;
  headers.set("content-length", String(body.length));
  return new Response(event.req.method === "HEAD" ? null : (body as Uint8Array<ArrayBuffer>), { status: 200, headers });
}
