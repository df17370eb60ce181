import { defineConfig } from "vitest/config";
import SummaryReporter from "./test/summary-reporter.ts";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/_build.ts", "test/_postgres-server.ts", "test/_s3-server.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    reporters: ["default", new SummaryReporter()],
  },
});
