import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Seconds a file took on a loaded 2-core machine (both projects, the slower of the two), for
 * a run with no vitest cache, as CI's is after `npm ci`. Only the files long enough to
 * decide when the run ends; the rest keep vitest's order.
 */
const SECONDS: Record<string, number> = {
  "robustness.test.ts": 40,
  "package.test.ts": 108,
  "data-filter.test.ts": 85,
  "files.test.ts": 84,
  "cli.test.ts": 65,
  "cli-newcomer.test.ts": 48,
  "oauth.test.ts": 45,
  "data.test.ts": 36,
  "ops-serve.test.ts": 35,
  "ops-backup.test.ts": 31,
  "store-copy.test.ts": 30,
  "ops-config.test.ts": 28,
  "data-auto-indexes.test.ts": 25,
  "security-migrations.test.ts": 25,
  "billing.test.ts": 23,
  "webhooks.test.ts": 23,
  "data-indexes.test.ts": 22,
  "files-s3.test.ts": 22,
  "dashboard-e2e.test.ts": 21,
  "security-files.test.ts": 21,
  "data-merge-patch.test.ts": 20,
  "client-types.test.ts": 19,
  "oauth-edges.test.ts": 19,
};

/**
 * Longest files first, across both projects. vitest's own order runs the postgres project,
 * then the sqlite one, and without a cache each in file-name order: a file that alone takes
 * a minute or two (the packed tarball, the robustness sweep) then started near the end and
 * ran by itself while the other workers had nothing left. Longest first keeps every worker
 * busy until the last few short files. A file's duration from the last run (vitest's cache)
 * wins over the table above.
 */
export default class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const weight = (spec: TestSpecification): number => {
      const file = relative(this.ctx.config.root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${file}`)?.duration;
      if (cached !== undefined) return cached;
      return (SECONDS[file.replace(/^test\//, "")] ?? 0) * 1000;
    };
    const weights = new Map(base.map((spec) => [spec, weight(spec)]));
    // Array#sort is stable: files of equal weight keep vitest's order.
    return base.sort((a, b) => weights.get(b)! - weights.get(a)!);
  }
}
