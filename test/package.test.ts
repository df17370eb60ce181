import { describe, expect, it, onTestFinished } from "vitest";
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { cleanEnv } from "./_helpers.ts";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");
const version = (name: string) => (JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;

/** The README's fenced block that follows `marker`, as written there. */
function readmeBlock(marker: string): string {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  const at = readme.indexOf(marker);
  expect(at, `README has no "${marker}"`).toBeGreaterThan(-1);
  const match = /```\w*\n([\s\S]*?)```/.exec(readme.slice(at));
  return match![1]!;
}

/** `package TScode` of each error tsc reports in a dependency's declarations. */
function thirdPartyErrors(tscOutput: string): string[] {
  return [...tscOutput.matchAll(/^node_modules\/((?:@[^/]+\/)?[^/]+)\/[^(]+\(\d+,\d+\): error (TS\d+)/gm)].map((m) => `${m[1]} ${m[2]}`);
}

/** The same, as docs/embedding.md lists them: one bullet per package, its codes in it. */
function documentedDeclarationErrors(): Set<string> {
  const doc = readFileSync(join(root, "docs", "embedding.md"), "utf8");
  const section = doc.slice(doc.indexOf("**`skipLibCheck`.**"), doc.indexOf("These are theirs to fix"));
  const listed = new Set<string>();
  for (const [, pkg, text] of section.matchAll(/^- \*\*(\S+) [^*]*\*\*([\s\S]*?)(?=^- |$(?![\s\S]))/gm)) {
    for (const [code] of text!.matchAll(/TS\d+/g)) listed.add(`${pkg} ${code}`);
  }
  return listed;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Waits until the child wrote a line matching `pattern` to stdout or stderr. */
function waitForOutput(child: ChildProcess, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    let seen = "";
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const m = pattern.exec(seen);
      if (m) resolve(m);
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`exited with ${code} before printing ${pattern}:\n${seen}`)));
  });
}

// A newcomer's path: `npm pack`, install the tarball into an empty project, compile strict
// TypeScript against it without skipLibCheck, require() it from CommonJS, and run the
// README's Express example beside the app's own routes.
describe("the packed tarball in an empty project", () => {
  it("installs, type-checks strictly, and runs the README's Express app", { timeout: 150_000 }, async () => {
    const project = mkdtempSync(join(tmpdir(), "tenantd-pack-"));
    let server: ChildProcess | undefined;
    // Runs also when the test times out, so no server outlives it.
    onTestFinished(() => {
      server?.kill();
      rmSync(project, { recursive: true, force: true });
    });
    {
      // dist/ is current (test/_build.ts); --ignore-scripts keeps pack from building again.
      await run("npm", ["pack", "--ignore-scripts", "--pack-destination", project], { cwd: root });
      const tgz = readdirSync(project).find((f) => f.endsWith(".tgz"))!;
      const listing = (await run("tar", ["-tzf", join(project, tgz)])).stdout.split("\n");
      expect(listing).toContain("package/LICENSE");
      expect(listing).toContain("package/examples/express/server.mjs");
      expect(listing.filter((f) => f.endsWith(".map"))).toEqual([]);

      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "newcomer", private: true, type: "module" }));
      // Offline from the npm cache where it can. Install scripts are skipped: better-sqlite3
      // would otherwise compile from source (minutes) since its prebuilt binaries live off
      // the npm registry; the binary already built for this Node is copied in instead.
      await run(
        "npm",
        ["install", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund", `./${tgz}`, `express@${version("express")}`, `@types/node@${version("@types/node")}`, `better-sqlite3@${version("better-sqlite3")}`],
        { cwd: project, env: cleanEnv() },
      );
      cpSync(join(root, "node_modules/better-sqlite3/build"), join(project, "node_modules/better-sqlite3/build"), { recursive: true });
      const installed = JSON.parse(readFileSync(join(project, "node_modules/tenantd/package.json"), "utf8")) as Record<string, unknown>;
      expect(installed).toMatchObject({ license: "MIT", repository: expect.anything(), homepage: expect.any(String), bugs: expect.anything() });

      // Strict TypeScript, skipLibCheck off, with only tenantd (and Node's types) installed.
      writeFileSync(
        join(project, "tsconfig.json"),
        JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, types: ["node"] }, files: ["main.ts"] }),
      );
      writeFileSync(
        join(project, "main.ts"),
        `import { createServer } from "node:http";
import { createTenantBackend, toNodeHandler, attachJsonClientErrors, ERROR_CODES, type ErrorCode, type TenantBackend,
  type Tenant, type DataRecord, type FindResult, type FileInfo, type ShareToken, type Subscription, type PlanInfo,
  type Entitlements, type UsageCounter, type WebhookEvent, type ErrorBody, type FetchClient, toFastifyHook } from "tenantd";
import { createClient } from "tenantd/client";
import { verifyWebhook } from "tenantd/webhooks";

interface Note { title: string; done: boolean }
const backend: TenantBackend = await createTenantBackend({ dataDir: "./data", publicUrl: "http://localhost:3000" });
const server = createServer(toNodeHandler(backend));
attachJsonClientErrors(server);
const key: string | undefined = backend.defaultApp?.publishableKey;
const apps = await backend.admin.listApps();
const code: ErrorCode = "limit_reached";
const status: number = ERROR_CODES[code];
declare const page: FindResult<Note>;
const first: DataRecord<Note> | undefined = page.records[0];
const title: string | undefined = first?.data.title;
declare const tenant: Tenant, file: FileInfo, share: ShareToken, sub: Subscription, plan: PlanInfo, ent: Entitlements, usage: UsageCounter, body: ErrorBody;
declare const event: WebhookEvent;
if (event.event === "tenant.deleted") { const reason: "self_delete" | "admin_delete" = event.payload.reason; console.log(reason); }
console.log(key, apps.length, status, title, tenant.email, file.url, share.token, sub.planSlug, plan.priceCents, ent, usage.limit, body.error);
const client: FetchClient = { ip: "203.0.113.7" };
console.log(await backend.fetch(new Request("http://localhost/api/v1/health"), client), toFastifyHook(backend), createClient, verifyWebhook);
await backend.close();
`,
      );
      const tsc = await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "."], { cwd: project }).then(
        () => "",
        (e: { stdout: string }) => e.stdout,
      );
      // h3's and unstorage's own declarations have errors without skipLibCheck, each listed
      // in docs/embedding.md; tenantd's declarations and the user's file have none.
      const documented = documentedDeclarationErrors();
      const seen = new Set(thirdPartyErrors(tsc));
      expect([...seen].filter((e) => !documented.has(e))).toEqual([]);

      // CommonJS: require() of every entry point works on Node 20.19+.
      const cjs = await run(
        process.execPath,
        ["-e", 'const t = require("tenantd"), c = require("tenantd/client"), w = require("tenantd/webhooks"); console.log(typeof t.createTenantBackend, typeof t.toNodeHandler, typeof c.createClient, typeof w.verifyWebhook)'],
        { cwd: project },
      );
      expect(cjs.stdout.trim()).toBe("function function function function");

      // The README's Express example, as written there.
      writeFileSync(join(project, "server.mjs"), readmeBlock("### Inside Express"));
      const port = await freePort();
      server = spawn(process.execPath, ["server.mjs"], { cwd: project, env: { ...cleanEnv(), PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] });
      const [, appId, pk] = await waitForOutput(server, /app id (\S+), publishable key (\S+)/);
      await waitForOutput(server, /listening on/);
      const base = `http://127.0.0.1:${port}`;
      const json = { "x-service-key": pk!, "content-type": "application/json" };

      const hello = await fetch(`${base}/hello`);
      expect(hello.status).toBe(200);
      expect(await hello.json()).toEqual({ hello: "world" });

      const signup = await fetch(`${base}/api/v1/auth/signup`, { method: "POST", headers: json, body: JSON.stringify({ email: "new@example.com", password: "a long password" }) });
      expect(signup.status).toBe(201);
      const { accessToken } = (await signup.json()) as { accessToken: string };
      const auth = { "x-service-app": appId!, authorization: `Bearer ${accessToken}` };

      const created = await fetch(`${base}/api/v1/data/notes`, { method: "POST", headers: { ...auth, "content-type": "application/json" }, body: JSON.stringify({ data: { title: "first" } }) });
      expect(created.status).toBe(201);
      expect(((await created.json()) as { record: { data: unknown } }).record.data).toEqual({ title: "first" });

      const form = new FormData();
      form.append("file", new Blob([Buffer.from("89504e470d0a1a0a0000000d49484452", "hex")], { type: "image/png" }), "dot.png");
      const upload = await fetch(`${base}/api/v1/files/upload`, { method: "POST", headers: auth, body: form });
      expect(upload.status).toBe(201);
      const { file } = (await upload.json()) as { file: { url: string } };
      expect(file.url.startsWith(`http://localhost:${port}/`)).toBe(true);

      const missing = await fetch(`${base}/api/v1/no-such-route`);
      expect(missing.status).toBe(404);
      expect(await missing.json()).toMatchObject({ error: "not_found" });
      // The host's own JSON route, its parser mounted after tenantd.
      const named = await fetch(`${base}/hello`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name: "ann" }) });
      expect(await named.json()).toEqual({ hello: "ann" });
      // The dashboard, from the bundle the tarball carries (no esbuild installed here).
      expect(listing).toContain("package/dist/dashboard/public/bundle.json");
      const dashboard = await run(
        process.execPath,
        [
          "--input-type=module",
          "-e",
          `import { createTenantBackend } from "tenantd";
const b = await createTenantBackend({ dataDir: "./dash-data", logger: "silent" });
const page = await b.fetch(new Request("http://localhost/_/"));
const script = /src="(assets\\/app-[A-Z0-9]{8}\\.js)"/.exec(await page.text())?.[1];
const bundle = await b.fetch(new Request("http://localhost/_/" + script));
console.log(page.status, script !== undefined, bundle.status, bundle.headers.get("cache-control"));
await b.close();`,
        ],
        { cwd: project, env: cleanEnv() },
      );
      expect(dashboard.stdout.trim()).toBe("200 true 200 public, max-age=31536000, immutable");
      server.kill();

      // Without h3's optional peer crossws (npm link, pnpm, --legacy-peer-deps) one more
      // declaration error shows, also listed: together the list is exact.
      rmSync(join(project, "node_modules/crossws"), { recursive: true, force: true });
      const again = await run(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", "."], { cwd: project }).then(
        () => "",
        (e: { stdout: string }) => e.stdout,
      );
      for (const e of thirdPartyErrors(again)) seen.add(e);
      expect([...seen].sort()).toEqual([...documented].sort());
    }
  });
});
