import { createRequire } from "node:module";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { buildOpenApiDocument } from "./document.ts";

// ../../package.json from both src/openapi and dist/openapi.
const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

/** `GET /api/v1/openapi.json`: the document, built once per server with its public URL. */
export function registerOpenApiRoutes(router: Router, core: Core): void {
  let body: string | undefined;
  router.get("/api/v1/openapi.json", () => {
    body ??= JSON.stringify(buildOpenApiDocument({ serverUrl: core.config.publicUrl, version }));
    return new Response(body, { headers: { "content-type": "application/json; charset=utf-8", "cache-control": "public, max-age=300" } });
  });
}
