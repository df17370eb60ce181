import { defineConfig } from "vitest/config";
import SummaryReporter from "./test/summary-reporter.ts";

/**
 * One suite, two engines: every test file runs once on SQLite and once on PostgreSQL (the
 * run's embedded server, test/_postgres-server.ts), switched by TENANTD_TEST_ENGINE, which
 * test/_postgres.ts `testStoreConfig` reads. `npm test` runs both projects;
 * `vitest run --project sqlite` (or `postgres`) runs one.
 */

/** Started once for the whole run, shared by both projects (each setup is idempotent). */
const GLOBAL_SETUP = ["test/_build.ts", "test/_postgres-server.ts"];

/**
 * Files that compare the engines or test PostgreSQL itself, whatever the switch says: they
 * run once, in the postgres project, instead of twice over the same two engines.
 */
const BOTH_ENGINES_ALREADY = ["test/postgres-*.test.ts"];

const shared = {
  globalSetup: GLOBAL_SETUP,
  testTimeout: 30_000,
  hookTimeout: 30_000,
};

export default defineConfig({
  test: {
    reporters: ["default", new SummaryReporter()],
    // Test files mostly wait (HTTP, PostgreSQL, child processes, argon2 in libuv's pool):
    // more files at once than cores keeps a 2-core machine busy (vitest's default is cores - 1).
    maxWorkers: 3,
    projects: [
      {
        test: {
          ...shared,
          name: "sqlite",
          include: ["test/**/*.test.ts"],
          exclude: BOTH_ENGINES_ALREADY,
          env: { TENANTD_TEST_ENGINE: "sqlite" },
        },
      },
      {
        test: {
          ...shared,
          name: "postgres",
          include: ["test/**/*.test.ts"],
          env: { TENANTD_TEST_ENGINE: "postgres" },
        },
      },
    ],
  },
});
