import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { toNodeHandler } from "h3/node";
import { afterEach, expect } from "vitest";
import { createTenantBackend, type TenantBackend, type TenantBackendConfig } from "../src/index.ts";
import { attachJsonClientErrors } from "../src/http/node-errors.ts";
import { knownStoreUrl, testStoreConfig } from "./_postgres.ts";

/** Cheap argon2 for tests only; production keeps OWASP's defaults. */
export const TEST_ARGON2 = { memoryCost: 1024, timeCost: 1, parallelism: 1 };

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Runs `fn` after the current test, before the backends it used are closed. */
export function afterThisTest(fn: () => unknown): void {
  cleanups.push(fn);
}

/** Environment variables tenantd reads; tests run without them, as on a fresh machine. */
const TENANTD_ENV = /^(TENANTD_|NODE_ENV$|PORT$|HOST$)/;

/** `process.env` without tenantd's variables: the environment for a CLI child process. */
export function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([k]) => !TENANTD_ENV.test(k)));
}

/**
 * Runs `fn` (an in-process CLI command) with tenantd's variables removed from process.env,
 * but for `env` (e.g. `cliStoreEnv`), set for the call only.
 */
export async function withCleanEnv<T>(fn: () => Promise<T>, env: Record<string, string> = {}): Promise<T> {
  const saved = Object.entries(process.env).filter(([k]) => TENANTD_ENV.test(k));
  for (const [k] of saved) delete process.env[k];
  Object.assign(process.env, env);
  try {
    return await fn();
  } finally {
    for (const k of Object.keys(env)) delete process.env[k];
    for (const [k, v] of saved) process.env[k] = v;
  }
}

/**
 * The environment a CLI command needs to reach the store of the `--data-dir` in its
 * arguments: nothing on SQLite (the directory holds it), on PostgreSQL the URL of the
 * database the test backends on that directory use. A directory no backend of this test
 * used keeps its own SQLite store, as the CLI tests of fresh directories expect.
 */
export async function cliStoreEnv(args: string[]): Promise<Record<string, string>> {
  const at = args.indexOf("--data-dir");
  const url = at >= 0 && at + 1 < args.length ? await knownStoreUrl(args[at + 1]!) : undefined;
  return url ? { TENANTD_DATABASE_URL: url } : {};
}

/**
 * `n` random bytes an upload stores as `application/octet-stream`: plain random bytes start
 * with `<` and a letter about once in 1,300 files, which the sniffer rightly refuses as
 * markup (415); a leading control byte rules that out.
 */
export function opaqueBytes(n: number): Buffer {
  const data = randomBytes(n);
  if (n > 0) data[0] = 0x01;
  return data;
}

/** A fresh temp folder, removed after the test. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "tenantd-test-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A clock tests move by hand. */
export function testClock(start = Date.UTC(2026, 0, 15, 12, 0, 0)) {
  let now = start;
  const clock = () => now;
  return Object.assign(clock, {
    advance(ms: number) {
      now += ms;
    },
    set(ms: number) {
      now = ms;
    },
  });
}

export interface ReqOptions {
  body?: unknown;
  /** raw body, sent as is */
  raw?: BodyInit;
  headers?: Record<string, string>;
  /** publishable key (x-service-key) */
  key?: string;
  /** tenant bearer: access token plus the app id for x-service-app */
  bearer?: { accessToken: string; appId: string };
  /** developer session token */
  developer?: string;
}

export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** Builds the Request every test sends, with the headers tenantd expects. */
export function buildRequest(base: string, method: string, path: string, opts: ReqOptions = {}): Request {
  const headers = new Headers(opts.headers);
  if (opts.key) headers.set("x-service-key", opts.key);
  if (opts.bearer) {
    headers.set("authorization", `Bearer ${opts.bearer.accessToken}`);
    headers.set("x-service-app", opts.bearer.appId);
  }
  if (opts.developer) headers.set("authorization", `Bearer ${opts.developer}`);
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    if (!headers.has("content-type")) headers.set("content-type", "application/json");
  }
  return new Request(base + path, { method, headers, body, duplex: "half" } as RequestInit);
}

export async function toReply(res: Response): Promise<Reply> {
  const text = await res.text();
  let body: unknown = undefined;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export interface TestBackend {
  backend: TenantBackend;
  dataDir: string;
  clock: ReturnType<typeof testClock>;
  /** the default app created on first start */
  app: { id: string; publishableKey: string };
  request(method: string, path: string, opts?: ReqOptions): Promise<Reply>;
}

/** A backend on a temp data directory, called through `app.fetch`. Closed after the test. */
export async function startBackend(config: TenantBackendConfig = {}): Promise<TestBackend> {
  const dataDir = config.dataDir ?? tempDir();
  const clock = testClock();
  const store = await testStoreConfig(dataDir);
  if (store.drop) cleanups.push(store.drop);
  // Options the environment could otherwise set (TENANTD_PUBLIC_URL, NODE_ENV, TENANTD_SMTP_HOST,
  // TENANTD_WEBHOOKS_ALLOW_INSECURE) are pinned, so the suite means the same on every machine.
  const backend = await createTenantBackend({
    dataDir,
    logger: "silent",
    argon2: TEST_ARGON2,
    clock,
    rateLimit: false,
    publicUrl: "http://localhost:3000",
    devBilling: true,
    email: { transport: "outbox" },
    webhooks: { allowInsecure: false },
    ...store.config,
    ...config,
  });
  cleanups.push(() => backend.close());
  const app = backend.defaultApp ?? (await backend.admin.listApps())[0]!;
  return {
    backend,
    dataDir,
    clock,
    app: { id: app.id, publishableKey: app.publishableKey },
    request: async (method, path, opts) => toReply(await backend.fetch(buildRequest("http://localhost", method, path, opts))),
  };
}

/** Serves the backend over real HTTP on a free port. */
export async function serveHttp(backend: TenantBackend): Promise<{ url: string; server: Server }> {
  const server = createServer(toNodeHandler(backend));
  attachJsonClientErrors(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

export interface TestTenant {
  id: string;
  email: string;
  accessToken: string;
  refreshToken: string;
  bearer: { accessToken: string; appId: string };
}

let seq = 0;
/** Signs up a tenant in the given app (default: the default app). */
export async function signupTenant(t: TestBackend, opts: { email?: string; password?: string; key?: string; appId?: string } = {}): Promise<TestTenant> {
  const email = opts.email ?? `user${++seq}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const res = await t.request("POST", "/api/v1/auth/signup", {
    key: opts.key ?? t.app.publishableKey,
    body: { email, password: opts.password ?? "correct horse battery" },
  });
  if (res.status !== 201) throw new Error(`signup failed: ${res.status} ${res.text}`);
  const appId = opts.appId ?? t.app.id;
  return {
    id: res.body.tenant.id,
    email: res.body.tenant.email,
    accessToken: res.body.accessToken,
    refreshToken: res.body.refreshToken,
    bearer: { accessToken: res.body.accessToken, appId },
  };
}

/** Creates a developer and signs in; returns the session token. */
export async function developerSession(t: TestBackend, email = `dev${++seq}@example.com`, password = "developer password"): Promise<string> {
  await t.backend.admin.createDeveloper({ email, password });
  const res = await t.request("POST", "/api/v1/developer/login", { body: { email, password } });
  if (res.status !== 200) throw new Error(`developer login failed: ${res.status} ${res.text}`);
  return res.body.token as string;
}

/** Expects the spec's error body. */
export function expectError(res: Reply, status: number, code: string): void {
  expect({ status: res.status, error: res.body?.error, message: typeof res.body?.message, text: res.status === status && res.body?.error === code ? "" : res.text })
    .toEqual({ status, error: code, message: "string", text: "" });
}
