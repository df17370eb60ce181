// Issue 45: backups from the dashboard's admin API. Only a developer the operator named with
// `tenantd developer operator` makes or downloads one, with the password again each time;
// never with the server key; recorded in every app's trail. SQLite only (vitest.config.ts):
// on PostgreSQL the page points at pg_dump, as `tenantd backup` does.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { runCommand } from "citty";
import { afterEach, describe, expect, it, vi } from "vitest";
import developerCli from "../src/cli/developer.ts";
import { developerSession, expectError, signupTenant, startBackend } from "./_helpers.ts";

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

const PASSWORD = "developer password";

async function withOperator() {
  const t = await startBackend();
  const developer = await developerSession(t, "ops@example.com", PASSWORD);
  await signupTenant(t, { email: "kept@example.com" });
  const call = (method: string, path: string, body?: unknown) => t.request(method, `/api/v1/admin/${path}`, { developer, body });
  return { t, developer, call };
}

async function grant(dataDir: string, ...more: string[]) {
  vi.spyOn(process.stdout, "write").mockImplementation(() => true);
  await runCommand(developerCli, { rawArgs: ["operator", "ops@example.com", "--data-dir", dataDir, ...more] });
  vi.mocked(process.stdout.write).mockRestore();
}

describe("backups from the dashboard", () => {
  it("only an operator developer may make or download one; the CLI grants and takes it back", async () => {
    const { t, call } = await withOperator();
    expect((await call("GET", "backups")).body).toEqual({ operator: false, unsupported: null, backups: [], restoreCommand: expect.stringMatching(/^npx tenantd restore /) });
    const refused = await call("POST", "backups", { password: PASSWORD });
    expectError(refused, 403, "forbidden");
    expect(refused.body.message).toContain("tenantd developer operator");
    await grant(t.dataDir);
    expect((await call("GET", "backups")).body.operator).toBe(true);
    await grant(t.dataDir, "--off");
    expectError(await call("POST", "backups", { password: PASSWORD }), 403, "forbidden");
  });

  it("makes one with the password again, lists it, and downloads it once through a one-minute link; each step audited", async () => {
    const { t, call } = await withOperator();
    await grant(t.dataDir);
    expectError(await call("POST", "backups", { password: "not my password" }), 401, "invalid_credentials");
    expectError(await call("POST", "backups", {}), 400, "invalid_request");
    const made = await call("POST", "backups", { password: PASSWORD });
    expect(made.status, made.text).toBe(201);
    const name = made.body.backup.name as string;
    expect(name).toMatch(/^tenantd-2026-01-15T12-00-00\.tar\.gz$/);
    const file = join(t.dataDir, "backups", name);
    expect(existsSync(file)).toBe(true);
    // Never the server key from the dashboard.
    expect(gunzipSync(readFileSync(file)).includes(Buffer.from("secret.key"))).toBe(false);
    expect((await call("GET", "backups")).body.backups).toEqual([{ name, bytes: readFileSync(file).length, createdAt: expect.any(String) }]);

    expectError(await call("POST", `backups/${name}/download-link`, { password: "wrong" }), 401, "invalid_credentials");
    expectError(await call("POST", "backups/..%2Fsecret.key/download-link", { password: PASSWORD }), 404, "not_found");
    const link = await call("POST", `backups/${name}/download-link`, { password: PASSWORD });
    expect(link.status, link.text).toBe(200);
    const res = await t.backend.fetch(new Request(`http://localhost/api/v1/${link.body.path}`, { headers: { authorization: `Bearer ${(await t.request("POST", "/api/v1/developer/login", { body: { email: "ops@example.com", password: PASSWORD } })).body.token}` } }));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${name}"`);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(file))).toBe(true);
    expectError(await call("GET", link.body.path), 404, "not_found");
    const late = await call("POST", `backups/${name}/download-link`, { password: PASSWORD });
    t.clock.advance(60_001);
    expectError(await call("GET", late.body.path), 404, "not_found");

    const trail = await t.backend.admin.listAudit(t.app.id, { action: "backup.*" });
    expect(trail.entries.map((e) => [e.action, e.actor.type, e.details?.file])).toEqual([["backup.downloaded", "developer", name], ["backup.created", "developer", name]]);
    expect(trail.entries[1]!.details).toMatchObject({ secretKeyIncluded: false });
  });
});
