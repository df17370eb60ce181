import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";
import { bundleDashboard, HASHED, MANIFEST, vendorModulePath } from "./bundle.ts";

export interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
  /** named by its content hash: browsers may keep it for a year without asking again */
  immutable: boolean;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};

/**
 * Where the UI's files are. From `dist/` (the package): `dist/dashboard/public`, the bundle
 * `npm run build` made. From the sources (tests, development): `src/dashboard/public`, the
 * plain ES modules, bundled at startup when esbuild is installed.
 */
export function publicDir(): string {
  for (const rel of ["./public/", "../../src/dashboard/public/"]) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, "index.html"))) return dir;
  }
  throw new Error("tenantd dashboard: its assets (dist/dashboard/public) are missing from the package. Reinstall tenantd, or set dashboard: false.");
}

function toAsset(name: string, body: Buffer): Asset {
  const ext = name.slice(name.lastIndexOf("."));
  return {
    type: TYPES[ext] ?? "application/octet-stream",
    body,
    gzip: gzipSync(body, { level: 9 }),
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
    immutable: HASHED.test(name),
  };
}

function readFolder(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  const walk = (sub: string) => {
    for (const entry of readdirSync(join(dir, sub))) {
      const rel = sub ? `${sub}/${entry}` : entry;
      if (statSync(join(dir, rel)).isDirectory()) walk(rel);
      else if (TYPES[rel.slice(rel.lastIndexOf("."))]) assets.set(rel, toAsset(rel, readFileSync(join(dir, rel))));
    }
  };
  walk("");
  return assets;
}

// One bundle per folder for the process: every backend a test suite starts shares it.
const loaded = new Map<string, Promise<Map<string, Asset>>>();

async function load(dir: string): Promise<Map<string, Asset>> {
  if (existsSync(join(dir, MANIFEST))) return readFolder(dir);
  const bundled = await bundleDashboard(dir);
  if (bundled) return new Map(bundled.map((f) => [f.name, toAsset(f.name, f.body)]));
  // No bundler: the modules as they are, with the vendor module beside them.
  const assets = readFolder(dir);
  assets.set("vendor/preact-htm.js", toAsset("x.js", readFileSync(vendorModulePath())));
  return assets;
}

/** Every file the dashboard serves, read (or bundled) and compressed once: name → asset. */
export function loadAssets(): Promise<Map<string, Asset>> {
  const dir = publicDir();
  let assets = loaded.get(dir);
  if (!assets) {
    assets = load(dir);
    loaded.set(dir, assets);
  }
  return assets;
}
