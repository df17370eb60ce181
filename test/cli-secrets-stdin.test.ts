import { describe, expect, it } from "vitest";
import { createTenantBackend } from "../src/index.ts";
import { buildRequest, tempDir, TEST_ARGON2, toReply } from "./_helpers.ts";
import { runCli } from "./_cli.ts";

const ENV = { TENANTD_ARGON2_MEMORY_COST: "1024", TENANTD_ARGON2_TIME_COST: "1" };

async function developerLogin(dir: string, email: string, password: string): Promise<number> {
  const backend = await createTenantBackend({ dataDir: dir, logger: "silent", argon2: TEST_ARGON2, bootstrap: false });
  try {
    return (await toReply(await backend.fetch(buildRequest("http://x", "POST", "/api/v1/developer/login", { body: { email, password } })))).status;
  } finally {
    await backend.close();
  }
}

describe('CLI secrets given as "-" are read from stdin, never from argv', () => {
  it("developer create and set-password --password -", async () => {
    const dir = tempDir();
    const created = await runCli(["developer", "create", "--email", "dev@example.com", "--password", "-", "--data-dir", dir], { input: "first secret pass\n", env: ENV });
    expect(created.code, created.stderr).toBe(0);
    expect(await developerLogin(dir, "dev@example.com", "first secret pass")).toBe(200);

    const changed = await runCli(["developer", "set-password", "--email", "dev@example.com", "--password", "-", "--data-dir", dir], { input: "second secret pass\n", env: ENV });
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toBe("password changed for dev@example.com\n");
    expect(await developerLogin(dir, "dev@example.com", "second secret pass")).toBe(200);
    expect(await developerLogin(dir, "dev@example.com", "first secret pass")).toBe(401);
  });

  it("app create and update --settings - take the JSON (Stripe keys, OAuth secrets) from stdin, multi-line", async () => {
    const dir = tempDir();
    const settings = JSON.stringify({ corsOrigins: ["https://shop.example"], billing: { stripeSecretKey: "sk_test_from_stdin" } }, null, 2);
    const created = await runCli(["app", "create", "--name", "shop", "--settings", "-", "--json", "--data-dir", dir], { input: settings, env: ENV });
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout).app.settings).toMatchObject({ corsOrigins: ["https://shop.example"], billing: { stripeSecretKey: "[encrypted]" } });

    const patch = '{\n  "oauth": { "providers": { "github": { "enabled": true, "clientId": "gh-id", "clientSecret": "gh-secret-from-stdin" } } }\n}\n';
    const updated = await runCli(["app", "update", "shop", "--settings", "-", "--json", "--data-dir", dir], { input: patch, env: ENV });
    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout).app.settings.oauth.providers.github).toMatchObject({ clientId: "gh-id", clientSecret: "[encrypted]" });

    // What was stored is the secret that was piped, sealed.
    const backend = await createTenantBackend({ dataDir: dir, logger: "silent", argon2: TEST_ARGON2, bootstrap: false });
    try {
      const app = (await backend.core.db.apps.list()).find((a) => a.name === "shop")!;
      const billing = app.settings.billing as { stripeSecretKey: string };
      const github = (app.settings.oauth as { providers: Record<string, { clientSecret: string }> }).providers.github!;
      expect(backend.core.secrets.isSealed(billing.stripeSecretKey)).toBe(true);
      expect(openAppSecret(backend, billing.stripeSecretKey, app.id)).toBe("sk_test_from_stdin");
      expect(openAppSecret(backend, github.clientSecret, app.id)).toBe("gh-secret-from-stdin");
    } finally {
      await backend.close();
    }

    const bad = await runCli(["app", "update", "shop", "--settings", "-", "--data-dir", dir], { input: "not json", env: ENV });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--settings must be a JSON object");
  });
});

/** Opens an app-settings secret the way the server does (bound to the app id when sealed as v2). */
function openAppSecret(backend: Awaited<ReturnType<typeof createTenantBackend>>, sealed: string, appId: string): string {
  return sealed.startsWith("enc:v2:") ? backend.core.secrets.open(sealed, appId) : backend.core.secrets.open(sealed);
}
