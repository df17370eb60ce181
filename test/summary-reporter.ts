import type { Reporter, TestModule } from "vitest/node";

/**
 * Ends the run with one plain line, "tests: N passed, N failed, N skipped", that any CI log
 * reader understands, after vitest's own report.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    const count = { passed: 0, failed: 0, skipped: 0, pending: 0 };
    for (const module of testModules) for (const test of module.children.allTests()) count[test.result().state]++;
    process.stdout.write(`\ntests: ${count.passed} passed, ${count.failed} failed, ${count.skipped} skipped\n`);
  }
}
