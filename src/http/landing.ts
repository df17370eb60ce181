import { createRequire } from "node:module";
import type { Router } from "./router.ts";
import { escapeHtml } from "../tools/html.ts";

const pkg = createRequire(import.meta.url)("../../package.json") as { version: string; homepage?: string };
const repoUrl = (pkg.homepage ?? "https://github.com/tenantd/tenantd").replace(/#.*$/, "");
const docsUrl = `${repoUrl}/tree/main/docs#readme`;

/** A page of docs/ on the project's site, for messages that point a person at one. */
export const docPageUrl = (file: string) => `${repoUrl}/blob/main/docs/${file}`;

/** What the server is and where to go next: a person opening the base URL should not meet a 404. */
export function describeServer(base: string) {
  return {
    name: "tenantd",
    description: "Self-hostable backend for apps: tenant auth, JSON records, files, billing, webhooks.",
    version: pkg.version,
    api: `${base}/api/v1`,
    health: `${base}/api/v1/health`,
    ready: `${base}/api/v1/health/ready`,
    docs: docsUrl,
  };
}

export function registerLandingRoute(router: Router): void {
  router.get("/", (event) => {
    // Under a mount the path carries the host's prefix; links stay relative to it.
    const info = describeServer(event.url.pathname.replace(/\/+$/, ""));
    if (!/\btext\/html\b/.test(event.req.headers.get("accept") ?? "")) return info;
    const link = (href: string) => `<a href="${escapeHtml(href)}">${escapeHtml(href)}</a>`;
    return new Response(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tenantd ${escapeHtml(info.version)}</title></head><body>` +
        `<h1>tenantd ${escapeHtml(info.version)}</h1><p>${escapeHtml(info.description)} This is its API server: apps call it under ${escapeHtml(info.api)}.</p>` +
        `<ul><li>Documentation: ${link(info.docs)}</li><li>Health: ${link(info.health)} (ready: ${link(info.ready)})</li></ul></body></html>`,
      { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": "default-src 'none'" } },
    );
  });
}
