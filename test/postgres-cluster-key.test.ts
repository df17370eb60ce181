import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import postgres from "postgres";
import { createTenantBackend } from "../src/index.ts";
import { ConfigError } from "../src/config.ts";
import { afterThisTest, signupTenant, startBackend, tempDir } from "./_helpers.ts";
import { createTestDatabase } from "./_postgres.ts";
import { spawnCli } from "./_serve.ts";

describe("one server key per PostgreSQL cluster (issue 39 item 10)", () => {
  it("a second node with the cluster's key starts and takes its tokens; a node with another key refuses to start, naming the fix", async () => {
    const database = await createTestDatabase();
    afterThisTest(() => database.drop());
    const clusterKey = randomBytes(32).toString("hex");
    const node = (secretKey: string) => ({ dataDir: tempDir(), database: { url: database.url, pool: { max: 3 } }, secretKey });

    const first = await startBackend(node(clusterKey));
    const second = await startBackend(node(clusterKey));
    const tenant = await signupTenant(first);
    expect((await second.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).status).toBe(200);

    const otherKey = randomBytes(32).toString("hex");
    const refused = createTenantBackend({ ...node(otherKey), logger: "silent", rateLimit: false });
    await expect(refused).rejects.toThrow(ConfigError);
    await expect(refused).rejects.toThrow(/not the one the other nodes on this database use[^]*set TENANTD_SECRET_KEY[^]*to the cluster's key/);

    // The database knows the key by a fingerprint only: neither key, nor a part of one, is in it.
    const sql = postgres(database.url, { max: 1, onnotice: () => {} });
    afterThisTest(() => sql.end({ timeout: 5 }));
    const [row] = await sql<{ value: string }[]>`SELECT value FROM server_meta WHERE key = 'server_key_fingerprint'`;
    expect(row!.value).toMatch(/^[0-9a-f]{32}$/);
    for (const key of [clusterKey, otherKey]) for (let i = 0; i + 8 <= key.length; i += 8) expect(row!.value).not.toContain(key.slice(i, i + 8));

    // The nodes already running go on serving.
    expect((await first.request("GET", "/api/v1/auth/me", { bearer: tenant.bearer })).status).toBe(200);
  });

  it("tenantd serve with another key than the cluster's exits 1 with the message", async () => {
    const database = await createTestDatabase();
    afterThisTest(() => database.drop());
    await startBackend({ dataDir: tempDir(), database: { url: database.url, pool: { max: 2 } }, secretKey: randomBytes(32).toString("hex") });
    const env = { TENANTD_DATABASE_URL: database.url, TENANTD_SECRET_KEY: randomBytes(32).toString("hex") };
    const served = spawnCli(["serve", "--port", "0", "--data-dir", tempDir()], env);
    expect((await served.exited).code).toBe(1);
    expect(served.stderr()).toMatch(/^tenantd: tenantd config: this node's server key is not the one the other nodes on this database use[^]*TENANTD_SECRET_KEY/m);
  });
});
