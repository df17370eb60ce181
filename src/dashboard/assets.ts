import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";

export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * The UI sits in `src/dashboard/public` (shipped in the package as is: plain ES modules and
 * CSS, no build step); from `dist/` the source folder is two levels up.
 */
function publicDir(): string {
  for (const rel of ["./public/", "../../src/dashboard/public/"]) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, "index.html"))) return dir;
  }
  throw new Error("tenantd dashboard: its assets (src/dashboard/public) are missing from the package. Reinstall tenantd, or set dashboard: false.");
}

function toAsset(name: string, body: Buffer): Asset {
  const ext = name.slice(name.lastIndexOf("."));
  return { type: TYPES[ext] ?? "application/octet-stream", body, gzip: gzipSync(body, { level: 9 }), etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"` };
}

/** Every file the dashboard serves, read and compressed once at startup: name → asset. */
export function loadAssets(): Map<string, Asset> {
  const dir = publicDir();
  const assets = new Map<string, Asset>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub))) {
      const rel = sub ? `${sub}/${entry}` : entry;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else if (TYPES[rel.slice(rel.lastIndexOf("."))]) assets.set(rel, toAsset(rel, readFileSync(join(dir, rel))));
    }
  };
  walk("");
  // Preact + hooks + htm in one ES module (htm's own standalone build, ~5 KB compressed).
  const require = createRequire(import.meta.url);
  const standalone = join(dirname(require.resolve("htm")), "..", "preact", "standalone.module.js");
  assets.set("vendor/preact-htm.js", toAsset("x.js", readFileSync(standalone)));
  return assets;
}
