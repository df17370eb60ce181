import { defineConfig } from "vitest/config";
import SummaryReporter from "./test/summary-reporter.ts";
import LongestFirst from "./test/_sequencer.ts";

/**
 * One suite, two engines: every test file runs once on SQLite and once on PostgreSQL (the
 * run's embedded server, test/_postgres-server.ts), switched by TENANTD_TEST_ENGINE, which
 * test/_postgres.ts `testStoreConfig` reads. `npm test` runs both projects;
 * `vitest run --project sqlite` (or `postgres`) runs one.
 */

/** Started once for the whole run, shared by both projects (each setup is idempotent). */
const GLOBAL_SETUP = ["test/_build.ts", "test/_postgres-server.ts", "test/_s3-server.ts"];

/**
 * Files that compare the engines or test PostgreSQL itself, whatever the switch says: they
 * run once, in the postgres project, instead of twice over the same two engines.
 */
const BOTH_ENGINES_ALREADY = ["test/postgres-*.test.ts"];

/**
 * Files that run in the sqlite project only, so no test is reported skipped:
 * - a SQLite mechanism, whose PostgreSQL counterpart is tested elsewhere: automatic indexes
 *   (data-indexes, postgres-records), the in-memory record counts and entitlements that
 *   PostgreSQL does not keep (its quotas and usage limits: security-quotas, billing, family),
 *   copying the SQLite file for backup (postgres-cli: the pg_dump refusal), WAL checkpoints
 *   on a worker thread;
 * - both engines already, by their own choice: store copy builds its SQLite source and its
 *   PostgreSQL targets itself (in the postgres project its fixtures would come from PostgreSQL);
 * - no store at all, or a child process on a fresh directory whose engine the switch does not
 *   reach (types, docs, the client bundle, the packed tarball, a newcomer's first commands):
 *   a second run would be the same SQLite run again. serve, the CLI and the API on PostgreSQL
 *   are covered by postgres-cli, postgres-backend and multinode.
 */
const SQLITE_ONLY = [
  "test/clock.test.ts",
  "test/crypto-hmac.test.ts",
  "test/sqlite-checkpointer.test.ts",
  "test/data-auto-indexes.test.ts",
  "test/perf-caches.test.ts",
  "test/ops-backup.test.ts",
  "test/ops-backup-dashboard.test.ts",
  "test/dashboard-backups.test.ts",
  "test/store-copy.test.ts",
  "test/client-bundle.test.ts",
  "test/client-types.test.ts",
  "test/public-types.test.ts",
  "test/docs.test.ts",
  "test/webhooks-guard.test.ts",
  "test/package.test.ts",
  "test/cli-newcomer.test.ts",
];

const shared = {
  globalSetup: GLOBAL_SETUP,
  testTimeout: 30_000,
  hookTimeout: 30_000,
};

export default defineConfig({
  test: {
    reporters: ["default", new SummaryReporter()],
    sequence: { sequencer: LongestFirst },
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
          exclude: SQLITE_ONLY,
          env: { TENANTD_TEST_ENGINE: "postgres" },
        },
      },
    ],
  },
});
