import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join } from "node:path";

/** The built dashboard's file list, beside its files: its presence means "already bundled". */
export const MANIFEST = "bundle.json";
/** esbuild's content hash in a bundled file's name: such a file never changes under its name. */
export const HASHED = /-[A-Z0-9]{8}\.(js|css)$/;

/** Preact + hooks + htm in one ES module (htm's own standalone build). */
export function vendorModulePath(): string {
  const require = createRequire(import.meta.url);
  return join(dirname(require.resolve("htm")), "..", "preact", "standalone.module.js");
}

/**
 * The dashboard's source folder bundled into one script and one stylesheet, named by
 * their content hash, and the index page that loads them: a page load fetches three files
 * instead of one per module. `undefined` when esbuild (a development dependency) is not
 * installed; the published package carries the bundle `npm run build` made.
 */
export async function bundleDashboard(sourceDir: string): Promise<{ name: string; body: Buffer }[] | undefined> {
  let esbuild: typeof import("esbuild");
  try {
    esbuild = await import("esbuild");
  } catch {
    return undefined;
  }
  const vendor = vendorModulePath();
  const result = await esbuild.build({
    entryPoints: [join(sourceDir, "app.js"), join(sourceDir, "style.css")],
    bundle: true,
    write: false,
    minify: true,
    format: "esm",
    target: "es2022",
    outdir: "out",
    entryNames: "[name]-[hash]",
    legalComments: "none",
    logLevel: "silent",
    plugins: [{ name: "tenantd-vendor", setup: (build) => build.onResolve({ filter: /\/vendor\/preact-htm\.js$/ }, () => ({ path: vendor })) }],
  });
  const files = result.outputFiles.map((f) => ({ name: basename(f.path), body: Buffer.from(f.contents) }));
  const script = files.find((f) => f.name.endsWith(".js"))!;
  const style = files.find((f) => f.name.endsWith(".css"))!;
  const index = readFileSync(join(sourceDir, "index.html"), "utf8")
    .replace('href="assets/style.css"', `href="assets/${style.name}"`)
    .replace('src="assets/app.js"', `src="assets/${script.name}"`);
  return [{ name: "index.html", body: Buffer.from(index) }, script, style];
}
