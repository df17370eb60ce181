import { describe, expect, it } from "vitest";
import { runCli as cli } from "./_cli.ts";
import { signupTenant, startBackend, tempDir, type TestBackend } from "./_helpers.ts";
import { serve } from "./_serve.ts";

const DAY = 24 * 60 * 60 * 1000;

/** An app with five tenants made a day apart (2026-01-15 … 01-19); the 2nd and 4th verified. */
async function fiveTenants(): Promise<{ t: TestBackend; ids: string[] }> {
  const t = await startBackend();
  const ids: string[] = [];
  for (const name of ["ada", "bob", "cyd", "dot", "eve"]) {
    ids.push((await signupTenant(t, { email: `${name}@${name === "eve" ? "other.org" : "example.com"}` })).id);
    t.clock.advance(DAY);
  }
  for (const i of [1, 3]) await t.backend.core.db.tenants.markVerified(ids[i]!, t.clock());
  await t.backend.close();
  return { t, ids };
}

describe("tenantd tenant list|show", () => {
  it("finds tenants by email, verification and creation time, a page at a time", async () => {
    const { t } = await fiveTenants();
    const dir = ["--app", "default", "--data-dir", t.dataDir];
    const json = async (...args: string[]) => {
      const run = await cli(["tenant", "list", ...args, ...dir, "--json"]);
      expect(run.code, run.stderr).toBe(0);
      return JSON.parse(run.stdout) as { tenants: { email: string }[]; total: number; limit: number; offset: number };
    };
    const emails = (r: { tenants: { email: string }[] }) => r.tenants.map((x) => x.email);

    expect(emails(await json())).toEqual(["eve@other.org", "dot@example.com", "cyd@example.com", "bob@example.com", "ada@example.com"]);
    expect(emails(await json("--email", "EXAMPLE"))).toHaveLength(4);
    expect(emails(await json("--verified"))).toEqual(["dot@example.com", "bob@example.com"]);
    expect(emails(await json("--unverified"))).toEqual(["eve@other.org", "cyd@example.com", "ada@example.com"]);
    expect(emails(await json("--created-since", "2026-01-16", "--created-before", "2026-01-18"))).toEqual(["cyd@example.com", "bob@example.com"]);
    const page = await json("--limit", "2", "--offset", "2");
    expect(page).toMatchObject({ total: 5, limit: 2, offset: 2 });
    expect(emails(page)).toEqual(["cyd@example.com", "bob@example.com"]);

    const text = await cli(["tenant", "list", "--limit", "2", ...dir]);
    expect(text.stdout).toContain("eve@other.org");
    expect(text.stdout).toContain("(1–2 of 5; next page: --offset 2)");

    const bad = await cli(["tenant", "list", "--created-since", "yesterday", ...dir]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("--created-since must be a date (2026-01-31)");
    const both = await cli(["tenant", "list", "--verified", "--unverified", ...dir]);
    expect(both.stderr).toContain("give --verified or --unverified, not both");
  });

  it("shows one tenant named by id or by email", async () => {
    const { t, ids } = await fiveTenants();
    const byEmail = await cli(["tenant", "show", "Bob@Example.com", "--app", "default", "--data-dir", t.dataDir, "--json"]);
    expect(JSON.parse(byEmail.stdout)).toEqual({ tenant: { id: ids[1], email: "bob@example.com", emailVerifiedAt: expect.any(String), createdAt: "2026-01-16T12:00:00.000Z" } });
    const byId = await cli(["tenant", "show", ids[0]!, "--app", "default", "--data-dir", t.dataDir]);
    expect(byId.stdout).toContain("email:     ada@example.com");
    expect(byId.stdout).toContain("verified:  no");
  });
});

describe("tenantd collection", () => {
  it("sets unique and indexed fields that the API then enforces", async () => {
    const t = await startBackend();
    await t.backend.close();
    const dir = ["--data-dir", t.dataDir];
    const set = await cli(["collection", "set", "contacts", "--app", "default", "--unique", "email", "--index", "status,dueAt", ...dir, "--json"]);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ collection: "contacts", unique: ["email"], indexed: ["status", "dueAt"] });
    // A flag not given keeps its list.
    await cli(["collection", "set", "contacts", "--app", "default", "--index", "status", ...dir]);
    const listed = await cli(["collection", "list", "--app", "default", ...dir]);
    expect(listed.stdout.trim()).toBe("contacts: unique email; indexed status");

    const again = await startBackend({ dataDir: t.dataDir });
    const tenant = await signupTenant(again);
    const create = (email: string) => again.request("POST", "/api/v1/data/contacts", { bearer: tenant.bearer, body: { data: { email } } });
    expect((await create("a@example.com")).status).toBe(201);
    expect((await create("a@example.com")).status).toBe(409);
    await again.backend.close();

    const removed = await cli(["collection", "remove", "contacts", "--app", "default", ...dir]);
    expect(removed.code).toBe(0);
    expect((await cli(["collection", "list", "--app", "default", ...dir, "--json"])).stdout).toContain('"collections": {}');
  });

  it("says how to name the app when it is given as a positional, and refuses a bad field", async () => {
    const t = await startBackend();
    await t.backend.close();
    const swapped = await cli(["collection", "set", "default", "contacts", "--unique", "email", "--data-dir", t.dataDir]);
    expect(swapped.code).toBe(1);
    expect(swapped.stderr).toBe("tenantd: give one collection and name the app with --app: tenantd collection set contacts --app default …\n");
    const bad = await cli(["collection", "set", "contacts", "--app", "default", "--unique", "no spaces", "--data-dir", t.dataDir]);
    expect(bad.stderr).toContain("must be a field path");
    const nothing = await cli(["collection", "set", "contacts", "--app", "default", "--data-dir", t.dataDir]);
    expect(nothing.stderr).toContain("give --unique, --index or both");
  });
});

describe("CLI errors in CLI words", () => {
  it("names the flag, not the body field, and points at CLI commands", async () => {
    const t = await startBackend();
    await t.backend.close();
    const dir = ["--app", "default", "--data-dir", t.dataDir];
    const noSlug = await cli(["plan", "create", "--name", "Pro", ...dir]);
    expect(noSlug.code).toBe(1);
    expect(noSlug.stderr).toBe("tenantd: --slug is required.\n");
    const noPlan = await cli(["plan", "archive", "gold", ...dir]);
    expect(noPlan.stderr).toContain("List them with: tenantd plan list --app <app>");
    expect(noPlan.stderr).not.toContain("/api/v1");
    const badPrice = await cli(["plan", "create", "--name", "Pro", "--slug", "pro", "--price-cents", "nine", ...dir]);
    expect(badPrice.stderr).toBe("tenantd: --price-cents must be a whole number (got nine)\n");
    const missingTenant = await cli(["tenant", "show", ...dir]);
    expect(missingTenant.stderr).toContain("TENANT is required: `tenantd tenant show <tenant>`");
    const missingApp = await cli(["tenant", "list", "--data-dir", t.dataDir]);
    expect(missingApp.stderr).toContain("--app is required");
  });

  it.each([
    [["tenant", "lisst"], "unknown command `tenantd tenant lisst`. Did you mean `tenantd tenant list`?"],
    [["colection", "list"], "unknown command `tenantd colection`. Did you mean `tenantd collection`?"],
    [["tenant", "list", "--app", "default", "--emial", "x"], "unknown option --emial for `tenantd tenant list`. Did you mean --email?"],
    [["serve", "--prot", "3108"], "unknown option --prot for `tenantd serve`. Did you mean --port?"],
  ])("suggests the nearest command or option for a typo: %j", async (args, message) => {
    const run = await cli(args);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(message);
    // A suggestion, not the whole help.
    expect(run.stderr.split("\n").length).toBeLessThan(3);
    expect(run.stdout).toBe("");
  });

  it("answers a --json run that fails with a JSON error object", async () => {
    const t = await startBackend();
    await t.backend.close();
    const cases: [string[], string, string][] = [
      [["tenant", "show", "ghost@example.com", "--app", "default", "--data-dir", t.dataDir], "not_found", 'No tenant with id or email "ghost@example.com"'],
      [["plan", "create", "--name", "Pro", "--app", "default", "--data-dir", t.dataDir], "invalid_request", "--slug is required"],
      [["tenant", "lisst"], "invalid_request", "Did you mean `tenantd tenant list`?"],
      [["app", "show", "nope", "--data-dir", t.dataDir], "not_found", 'No app with id or name "nope"'],
    ];
    for (const [args, error, message] of cases) {
      const run = await cli([...args, "--json"]);
      expect(run.code).toBe(1);
      const body = JSON.parse(run.stdout) as { error: string; message: string };
      expect(body).toEqual({ error, message: expect.stringContaining(message) });
      expect(run.stderr).toBe("");
    }
  });

  it("prints no colour codes when stdout is not a terminal, or when NO_COLOR is set", async () => {
    // citty alone would colour this (it only knows NO_COLOR=1, TEST and CI, which are cleared here).
    const cases: Record<string, string>[] = [{ TEST: "", CI: "", TERM: "xterm" }, { TEST: "", CI: "", TERM: "xterm", NO_COLOR: "yes" }];
    for (const env of cases) {
      const help = await cli(["tenant", "list", "--help"], { env });
      expect(help.code).toBe(0);
      expect(help.stdout).toContain("--created-since");
      expect(help.stdout).not.toContain("\u001b[");
    }
  });
});

describe("app names", () => {
  it("refuses a second app of the same name for one developer, so --app <name> keeps naming one app", async () => {
    const t = await startBackend();
    await t.backend.close();
    const dir = ["--data-dir", t.dataDir];
    await cli(["developer", "create", "--email", "dev@example.com", "--password", "long enough", ...dir]);
    expect((await cli(["app", "create", "--name", "shop", ...dir])).code).toBe(0);

    const again = await cli(["app", "create", "--name", "shop", ...dir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^tenantd: An app named "shop" already exists \(app_\w+\) among this developer's apps: choose another name\.\n$/);
    const json = await cli(["app", "create", "--name", " shop ", ...dir, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ error: "conflict", message: expect.stringContaining('An app named "shop" already exists') });
    const renamed = await cli(["app", "update", "default", "--name", "shop", ...dir]);
    expect(renamed.code).toBe(1);
    expect(renamed.stderr).toContain('An app named "shop" already exists');

    // The name still names one app, and a new name is fine.
    expect(JSON.parse((await cli(["app", "show", "shop", ...dir, "--json"])).stdout).app.name).toBe("shop");
    expect((await cli(["app", "create", "--name", "shop-staging", ...dir])).code).toBe(0);
    expect(JSON.parse((await cli(["app", "list", ...dir, "--json"])).stdout).apps.map((a: { name: string }) => a.name).sort()).toEqual(["default", "shop", "shop-staging"]);
  });
});

describe("tenantd developer create", () => {
  it("says where to sign in: the dashboard's address", async () => {
    const t = await startBackend();
    await t.backend.close();
    const run = await cli(["developer", "create", "--email", "dev@example.com", "--password", "long enough", "--data-dir", t.dataDir]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("sign in to the dashboard: http://localhost:3000/_/");
    expect(run.stdout).not.toContain("POST /api/v1/developer/login");
  });
});

describe("the serve banner", () => {
  it("points a newcomer at the walkthrough on the first start, and counts apps instead of naming a dozen", async () => {
    const dataDir = tempDir();
    const first = await serve(dataDir);
    expect(first.stdout()).toContain("New here? https://github.com/tenantd/tenantd/blob/main/docs/walkthrough.md");
    first.child.kill("SIGTERM");
    await first.exited;

    const addApps = async (from: number, to: number) => {
      const t = await startBackend({ dataDir });
      for (let i = from; i <= to; i++) await t.backend.admin.createApp({ name: `app-${i}` });
      await t.backend.close();
    };
    await addApps(1, 3);
    const few = await serve(dataDir);
    const named = /^apps: (.*) — ids and keys: tenantd app list$/m.exec(few.stdout());
    expect(named?.[1]?.split(", ").sort()).toEqual(["app-1", "app-2", "app-3", "default"]);
    expect(few.stdout()).not.toContain("walkthrough");
    few.child.kill("SIGTERM");
    await few.exited;

    await addApps(4, 12);
    const many = await serve(dataDir);
    expect(many.stdout()).toMatch(/^apps: 13 — names, ids and keys: tenantd app list$/m);
    expect(many.stdout()).not.toContain("app-12");
    many.child.kill("SIGTERM");
    await many.exited;
  });
});
