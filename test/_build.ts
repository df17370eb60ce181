import { execFileSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

// Examples, the CLI and the packed tarball run the built `dist/`. `npm ci` builds it once
// (prepare); this rebuilds only when a source file is newer, so `npm test` never builds twice.
const root = join(import.meta.dirname, "..");

function newest(dir: string): number {
  let max = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    max = Math.max(max, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return max;
}

// Both vitest projects (sqlite, postgres) list this setup; the first one builds.
const BUILT = Symbol.for("tenantd.test.build");

export default function setup(): void {
  const state = globalThis as { [BUILT]?: true };
  if (state[BUILT]) return;
  state[BUILT] = true;
  let built = 0;
  try {
    built = statSync(join(root, "dist", "index.js")).mtimeMs;
  } catch {}
  if (built >= newest(join(root, "src"))) return;
  execFileSync("npm", ["run", "build"], { cwd: root, stdio: "inherit" });
}
