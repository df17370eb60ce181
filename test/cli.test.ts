import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { createTenantBackend } from "../src/index.ts";
import { buildRequest, cleanEnv, tempDir, toReply, TEST_ARGON2 } from "./_helpers.ts";
import { runCli } from "./_cli.ts";

const BIN = fileURLToPath(new URL("../bin/tenantd", import.meta.url));

const cli = runCli;

describe("tenantd CLI", () => {
  it("prints help listing the commands", async () => {
    const run = await cli(["--help"]);
    expect(run.code).toBe(0);
    for (const cmd of ["serve", "app", "developer"]) expect(run.stdout).toContain(cmd);
  });

  it("creates, lists, shows, updates, rotates and deletes apps on a data directory", async () => {
    const dir = tempDir();
    const created = await cli(["app", "create", "--name", "shop", "--cors-origins", "https://shop.example", "--json", "--data-dir", dir]);
    expect(created.code).toBe(0);
    const app = JSON.parse(created.stdout).app;
    expect(app).toMatchObject({ name: "shop", publishableKey: expect.stringMatching(/^pk_/), settings: { corsOrigins: ["https://shop.example"] } });

    const listed = await cli(["app", "list", "--json", "--data-dir", dir]);
    expect(JSON.parse(listed.stdout).apps.map((a: { id: string }) => a.id)).toEqual([app.id]);
    expect((await cli(["app", "list", "--data-dir", dir])).stdout).toContain(app.publishableKey);

    const shown = await cli(["app", "show", "shop", "--data-dir", dir]);
    expect(shown.stdout).toContain(app.id);

    const updated = await cli(["app", "update", app.id, "--signup-mode", "closed", "--settings", '{"billing":{"stripeSecretKey":"sk_test_x"}}', "--json", "--data-dir", dir]);
    expect(updated.code).toBe(0);
    const after = JSON.parse(updated.stdout).app;
    expect(after.settings.signupMode).toBe("closed");
    expect(after.settings.billing.stripeSecretKey).toBe("[encrypted]");

    const rotated = await cli(["app", "rotate-key", "shop", "--json", "--data-dir", dir]);
    expect(JSON.parse(rotated.stdout).app.publishableKey).not.toBe(app.publishableKey);

    const refused = await cli(["app", "delete", "shop", "--data-dir", dir]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("--yes");
    expect((await cli(["app", "delete", "shop", "--yes", "--data-dir", dir])).code).toBe(0);
    expect(JSON.parse((await cli(["app", "list", "--json", "--data-dir", dir])).stdout).apps).toEqual([]);
  });

  it("refuses to work on a data directory that does not exist, instead of creating an empty one", async () => {
    const missing = `${tempDir()}/typo`;
    const run = await cli(["app", "list", "--data-dir", missing]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("no tenantd data directory");
    expect(run.stderr).toContain("tenantd serve");
    const { existsSync } = await import("node:fs");
    expect(existsSync(missing)).toBe(false);
  });

  it("gives a new app to the only developer; --owner sets it later; an ambiguous name asks for the id", async () => {
    const dir = tempDir();
    await cli(["developer", "create", "--email", "solo@example.com", "--password", "long enough", "--data-dir", dir]);
    const first = JSON.parse((await cli(["app", "create", "--name", "shop", "--json", "--data-dir", dir])).stdout).app;
    const solo = JSON.parse((await cli(["developer", "list", "--json", "--data-dir", dir])).stdout).developers[0];
    expect(first.ownerId).toBe(solo.id);
    await cli(["developer", "create", "--email", "second@example.com", "--password", "long enough", "--data-dir", dir]);
    const orphan = await cli(["app", "create", "--name", "shop", "--data-dir", dir]);
    expect(orphan.stdout).toContain("no owner yet");
    const ambiguous = await cli(["app", "show", "shop", "--data-dir", dir]);
    expect(ambiguous.code).toBe(1);
    expect(ambiguous.stderr).toContain('2 apps are named "shop"');
    const second = JSON.parse((await cli(["app", "list", "--json", "--data-dir", dir])).stdout).apps.find((a: { ownerId: string | null }) => a.ownerId === null);
    const owned = await cli(["app", "update", second.id, "--owner", "second@example.com", "--json", "--data-dir", dir]);
    expect(owned.code).toBe(0);
    expect(JSON.parse(owned.stdout).app.ownerId).not.toBeNull();
    const unknown = await cli(["app", "update", second.id, "--owner", "nobody@example.com", "--data-dir", dir]);
    expect(unknown.stderr).toContain("No developer with email nobody@example.com");
  });

  it.each([
    [["serve", "--prot", "3108"], "unknown option --prot for `tenantd serve`"],
    [["app", "list", "--jsn"], "unknown option --jsn for `tenantd app list`"],
    [["app", "create", "--name", "x", "--owner", "ghost@example.com"], "No developer with email ghost@example.com"],
    [["app", "create", "--name", "x", "--settings", "[1]"], "--settings must be a JSON object"],
    [["app", "create", "--name", "x", "--settings", '{"signupMode":"maybe"}'], "settings.signupMode"],
    [["developer", "create", "--email", "not-an-email", "--password", "long enough"], "must be an email"],
    [["developer", "create", "--email", "d@example.com", "--password", "short"], "at least 8 characters"],
  ])("fails clearly with exit code 1: %j", async (args, message) => {
    const run = await cli([...args, "--data-dir", tempDir()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toMatch(/at .*\.js:\d+/);
  });

  it("creates a developer with the password from stdin; the developer can sign in", async () => {
    const dir = tempDir();
    const run = await cli(["developer", "create", "--email", "Dev@Example.com", "--json", "--data-dir", dir], { input: "piped password\n" });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout).developer.email).toBe("dev@example.com");
    const backend = await createTenantBackend({ dataDir: dir, logger: "silent", argon2: TEST_ARGON2 });
    try {
      const login = await toReply(await backend.fetch(buildRequest("http://x", "POST", "/api/v1/developer/login", { body: { email: "dev@example.com", password: "piped password" } })));
      expect(login.status).toBe(200);
      expect((await cli(["developer", "list", "--data-dir", dir])).stdout).toContain("dev@example.com");
    } finally {
      await backend.close();
    }
  });

  it("changes reach a running server on the same data directory without a restart", async () => {
    const dir = tempDir();
    const backend = await createTenantBackend({ dataDir: dir, logger: "silent", argon2: TEST_ARGON2 });
    try {
      const key = backend.defaultApp!.publishableKey;
      const signup = (email: string, k = key) => backend.fetch(buildRequest("http://x", "POST", "/api/v1/auth/signup", { key: k, body: { email, password: "a long password" } }));
      expect((await signup("one@example.com")).status).toBe(201);
      expect((await cli(["app", "update", "default", "--signup-mode", "closed", "--data-dir", dir])).code).toBe(0);
      expect((await toReply(await signup("two@example.com"))).body.error).toBe("signup_disabled");
      const rotated = JSON.parse((await cli(["app", "rotate-key", "default", "--json", "--data-dir", dir])).stdout).app.publishableKey;
      expect((await toReply(await signup("three@example.com"))).body.error).toBe("unauthorized");
      expect((await toReply(await signup("three@example.com", rotated))).body.error).toBe("signup_disabled");
    } finally {
      await backend.close();
    }
  });

  it("serve --port 0 prints the URL and the default app's credentials, and answers", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [BIN, "serve", "--port", "0", "--data-dir", dir], { env: cleanEnv(), stdio: ["ignore", "pipe", "pipe"] });
    try {
      const out = await new Promise<string>((resolve, reject) => {
        let buf = "";
        child.stdout.on("data", (d) => {
          buf += d;
          if (buf.includes("developer create")) resolve(buf);
        });
        child.on("close", (code) => reject(new Error(`serve exited with ${code}: ${buf}`)));
      });
      const url = /listening on (\S+)/.exec(out)![1]!;
      const key = /publishable key:\s+(\S+)/.exec(out)![1]!;
      expect(out).toMatch(/app id:\s+app_/);
      const res = await fetch(buildRequest(url, "POST", "/api/v1/auth/signup", { key, body: { email: "s@example.com", password: "a long password" } }));
      expect(res.status).toBe(201);
      // With no public URL given, links point at the address really served (port 0 picked one).
      const mail = await cli(["mail", "list", "--json", "--data-dir", dir]);
      const links = JSON.stringify(JSON.parse(mail.stdout));
      expect(links).toContain(`${url}/auth/verify-email`);
      // A CLI command builds its links with the URL the server announced, not a default.
      const tenantId = ((await res.json()) as { tenant: { id: string } }).tenant.id;
      const resent = await cli(["tenant", "resend-verification", tenantId, "--app", "default", "--data-dir", dir]);
      expect(resent.code, resent.stderr).toBe(0);
      const after = JSON.parse((await cli(["mail", "list", "--json", "--data-dir", dir])).stdout).messages as { link: string }[];
      expect(after).toHaveLength(2);
      for (const m of after) expect(m.link.startsWith(`${url}/auth/verify-email`)).toBe(true);
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("close", resolve));
    }
  });

  it("serve refuses a port that is taken instead of moving to another", async () => {
    const { createServer } = await import("node:net");
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "localhost", resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const run = await cli(["serve", "--port", String(port), "--data-dir", tempDir()]);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`port ${port} is in use`);
    } finally {
      taken.close();
    }
  });

  it("serve refuses a bad port with a clear message", async () => {
    const run = await cli(["serve", "--port", "99999", "--data-dir", tempDir()]);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("--port must be a number");
  });
});
