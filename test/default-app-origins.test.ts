import { describe, expect, it } from "vitest";
import { tempDir } from "./_helpers.ts";
import { serve, spawnCli, type Served } from "./_serve.ts";

const PRODUCTION_ENV = { TENANTD_EMAIL_TRANSPORT: "outbox" };

/** A browser's signup from `origin` against the default app that `serve` just created. */
async function signupFrom(s: Served, origin: string, email: string) {
  const key = /publishable key:\s+(\S+)/.exec(s.stdout())![1]!;
  const res = await fetch(`${s.url}/api/v1/auth/signup`, {
    method: "POST",
    headers: { "x-service-key": key, "content-type": "application/json", origin },
    body: JSON.stringify({ email, password: "a long password" }),
  });
  return { status: res.status, allowOrigin: res.headers.get("access-control-allow-origin"), body: (await res.json()) as { error?: string } };
}

describe("the default app's browser origins follow the server's mode", () => {
  it("development: the usual local dev-server origins are allowed, and the banner says so", async () => {
    const s = await serve(tempDir());
    expect(s.stdout()).toContain("browser origins: http://localhost:3000, http://localhost:5173 (development only)");
    const vite = await signupFrom(s, "http://localhost:5173", "dev@example.com");
    expect(vite).toMatchObject({ status: 201, allowOrigin: "http://localhost:5173" });
  });

  it("production: no origin is allowed until the operator adds one with the command the banner prints", async () => {
    const dataDir = tempDir();
    const s = await serve(dataDir, ["--production"], PRODUCTION_ENV);
    const hint = /browser origins: none \(production\)\. Allow your front end with: (tenantd app update .*)$/m.exec(s.stdout());
    expect(hint, s.stdout()).not.toBeNull();
    expect(hint![1]).toBe(`tenantd app update default --cors-origins https://app.example.com --data-dir ${dataDir}`);

    for (const origin of ["http://localhost:5173", "http://localhost:3000"]) {
      const refused = await signupFrom(s, origin, "prod@example.com");
      expect(refused).toMatchObject({ status: 403, body: { error: "origin_not_allowed" } });
    }

    // The printed command, as printed, makes the front end's origin work on the running server.
    const update = spawnCli(hint![1]!.split(" ").slice(1));
    expect((await update.exited).code, update.stderr()).toBe(0);
    await expect.poll(async () => (await signupFrom(s, "https://app.example.com", "prod@example.com")).status).toBe(201);
    expect((await signupFrom(s, "http://localhost:5173", "other@example.com")).status).toBe(403);
  });
});
