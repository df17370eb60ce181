import { existsSync } from "node:fs";

/**
 * A worker thread's script, compiled JavaScript: from dist/ it sits beside this file; from the
 * TypeScript sources (vitest, which builds dist/ first: test/_build.ts) it is dist/'s copy.
 */
export function workerFile(name: string): URL {
  for (const rel of [`./${name}`, `../../../dist/db/sqlite/${name}`]) {
    const url = new URL(rel, import.meta.url);
    if (existsSync(url)) return url;
  }
  throw new Error(`${name} is missing from tenantd's dist/ (npm run build)`);
}
