import { describe, expect, test } from "vitest";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "./_helpers.ts";
import { serve, spawnCli } from "./_serve.ts";
import { createTestDatabase } from "./_postgres.ts";

/** `TENANTD_DATABASE_URL` puts `tenantd serve` and the CLI commands on PostgreSQL through the one options table. */
describe("serve and the CLI on PostgreSQL from the environment", () => {
  test("a tenant signed up through serve is listed by the CLI from another data directory; no SQLite file is made", async () => {
    const database = await createTestDatabase({ empty: true });
    try {
      const env = { TENANTD_DATABASE_URL: database.url, TENANTD_DATABASE_POOL_MAX: "3" };
      const serveDir = tempDir();
      const server = await serve(serveDir, [], env);
      const key = /publishable key:\s+(\S+)/.exec(server.stdout())![1]!;
      const signup = await fetch(`${server.url}/api/v1/auth/signup`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-service-key": key },
        body: JSON.stringify({ email: "pg-cli@example.com", password: "correct horse battery" }),
      });
      expect(signup.status).toBe(201);
      const health = await fetch(`${server.url}/api/v1/health`);
      expect(health.status).toBe(200);
      server.child.kill("SIGTERM");
      await server.exited;

      // Another directory (say, an operator's machine): the data is in PostgreSQL, not there;
      // the cluster's key comes with the environment (issue 39 item 10).
      const elsewhere = tempDir();
      const list = spawnCli(["tenant", "list", "--app", "default", "--json", "--data-dir", elsewhere], { ...env, TENANTD_SECRET_KEY: readFileSync(join(serveDir, "secret.key"), "utf8").trim() });
      const { code } = await list.exited;
      expect(code, list.stderr()).toBe(0);
      const listed = JSON.parse(list.stdout()) as { tenants: { email: string }[]; total: number };
      expect(listed.total).toBe(1);
      expect(listed.tenants.map((t) => t.email)).toEqual(["pg-cli@example.com"]);
      expect(existsSync(join(elsewhere, "tenantd.db"))).toBe(false);
    } finally {
      await database.drop();
    }
  });

  test("config print names the source and hides the URL's password; backup refuses and points at pg_dump", async () => {
    const url = "postgres://tenantd:hunter2-pg@db.example.com:5432/tenantd";
    const print = spawnCli(["config", "print", "--json"], { TENANTD_DATABASE_URL: url }, tempDir());
    expect((await print.exited).code, print.stderr()).toBe(0);
    expect(print.stdout()).not.toContain("hunter2-pg");
    const printed = JSON.parse(print.stdout()) as { options: { option: string; value: unknown; source: string }[] };
    expect(printed.options.find((o) => o.option === "database.url")).toMatchObject({ value: "[redacted]", source: "environment variable TENANTD_DATABASE_URL" });

    const backup = spawnCli(["backup", join(tempDir(), "b.tar.gz"), "--data-dir", tempDir()], { TENANTD_DATABASE_URL: url });
    expect((await backup.exited).code).toBe(1);
    expect(backup.stderr()).toContain("pg_dump");
    expect(backup.stderr()).not.toContain("hunter2-pg");
  });

  test("a bad TENANTD_DATABASE_URL stops serve with the variable's name and without its value", async () => {
    const run = spawnCli(["serve", "--port", "0", "--data-dir", tempDir()], { TENANTD_DATABASE_URL: "mysql://root:hunter2-my@db/x" });
    expect((await run.exited).code).toBe(1);
    expect(run.stderr()).toContain("environment variable TENANTD_DATABASE_URL (option database.url) must be a PostgreSQL URL");
    expect(run.stderr()).not.toContain("hunter2-my");
    expect(run.stdout()).not.toContain("listening");
  });
});
