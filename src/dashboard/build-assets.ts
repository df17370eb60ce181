// `npm run build` runs this: the dashboard bundled into dist/dashboard/public, which the
// package serves as is (no esbuild needed at run time).
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { bundleDashboard, MANIFEST } from "./bundle.ts";

const source = fileURLToPath(new URL("../../src/dashboard/public/", import.meta.url));
const out = fileURLToPath(new URL("./public/", import.meta.url));
const files = await bundleDashboard(source);
if (!files) throw new Error("tenantd build: esbuild is missing (a devDependency): run npm ci first.");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const f of files) writeFileSync(join(out, f.name), f.body);
writeFileSync(join(out, MANIFEST), JSON.stringify({ files: files.map((f) => f.name) }, null, 2));
