import { describe, expect, test } from "vitest";
import { createTenantBackend } from "../src/index.ts";
import { ConfigError } from "../src/config.ts";
import { expectError, signupTenant, startBackend, tempDir, TEST_ARGON2 } from "./_helpers.ts";
import { createTestDatabase } from "./_postgres.ts";

/** The whole server on PostgreSQL, selected by `database.url`, and its startup failures. */
describe("createTenantBackend on PostgreSQL", () => {
  test("serves sign-up, refresh and records from a PostgreSQL database", async () => {
    const database = await createTestDatabase({ empty: true });
    try {
      const t = await startBackend({ database: { url: database.url, pool: { max: 4 } } });
      expect(t.backend.core.db).toBeDefined();
      const tenant = await signupTenant(t);
      const refreshed = await t.request("POST", "/api/v1/auth/refresh", { key: t.app.publishableKey, body: { refreshToken: tenant.refreshToken } });
      expect(refreshed.status).toBe(200);
      for (const n of [3, 1, 2]) {
        const res = await t.request("POST", "/api/v1/data/items", { bearer: tenant.bearer, body: { data: { n, tag: n % 2 ? "odd" : "even" } } });
        expect(res.status).toBe(201);
      }
      const list = await t.request("GET", `/api/v1/data/items?filter=${encodeURIComponent('{"tag":"odd"}')}&sort=${encodeURIComponent('{"n":1}')}`, { bearer: tenant.bearer });
      expect(list.status).toBe(200);
      expect(list.body.records.map((r: { data: { n: number } }) => r.data.n)).toEqual([1, 3]);
      expect(list.body.total).toBe(2);
      // The rows are in PostgreSQL, not in a SQLite file.
      expect(() => t.backend.core.sqlite.prepare("SELECT 1")).toThrow(/runs on PostgreSQL/);
      await t.backend.close();
    } finally {
      await database.drop();
    }
  });

  test("concurrent sign-ups with one email: one account, the others told email_exists (not a 500)", async () => {
    const database = await createTestDatabase({ empty: true });
    try {
      const t = await startBackend({ database: { url: database.url, pool: { max: 8 } } });
      const replies = await Promise.all(
        Array.from({ length: 8 }, () => t.request("POST", "/api/v1/auth/signup", { key: t.app.publishableKey, body: { email: "race@example.com", password: "correct horse battery" } })),
      );
      expect(replies.filter((r) => r.status === 201)).toHaveLength(1);
      for (const r of replies.filter((x) => x.status !== 201)) expectError(r, 409, "email_exists");
      await t.backend.close();
    } finally {
      await database.drop();
    }
  });

  test("an unreachable database makes startup fail", async () => {
    await expect(
      createTenantBackend({ dataDir: tempDir(), logger: "silent", argon2: TEST_ARGON2, database: { url: "postgres://nobody:nothing@127.0.0.1:1/none" } }),
    ).rejects.toThrow(/ECONNREFUSED|connect/);
  });

  test("a database URL that is not postgres:// is a configuration error naming the option", async () => {
    await expect(createTenantBackend({ dataDir: tempDir(), logger: "silent", database: { url: "mysql://x" } })).rejects.toThrow(ConfigError);
    await expect(createTenantBackend({ dataDir: tempDir(), logger: "silent", database: { url: "mysql://root:hunter2@x" } })).rejects.toThrow(/option database\.url must be a PostgreSQL URL such as postgres:\/\//);
    // The URL carries a password: the message never repeats it.
    await expect(createTenantBackend({ dataDir: tempDir(), logger: "silent", database: { url: "mysql://root:hunter2@x" } })).rejects.not.toThrow(/hunter2/);
  });
});
