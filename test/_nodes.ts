import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { BIN, TEST_ARGON2_ENV } from "./_serve.ts";
import { cleanEnv } from "./_helpers.ts";
import { createTestDatabase } from "./_postgres.ts";

/**
 * Several `tenantd serve` processes (the built bin/tenantd) on one PostgreSQL database, the
 * way a load balancer would see them: same secret key, same storage, any node for any request.
 * Started once per file (beforeAll) and stopped by `stop()` (afterAll).
 */

export interface Node {
  name: string;
  url: string;
  dataDir: string;
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

export interface CallOptions {
  /** publishable key (x-service-key) */
  key?: string;
  /** tenant access token and app id */
  bearer?: { accessToken: string; appId: string };
  /** developer session token */
  developer?: string;
  body?: unknown;
  raw?: BodyInit;
  headers?: Record<string, string>;
  /** The client address the proxy in front reports (x-forwarded-for); a fresh one when absent. */
  ip?: string;
}

let ipSeq = 0;
/** A client address of its own (TEST-NET-2 and benchmark ranges are never real clients). */
export const freshIp = () => `198.18.${(++ipSeq >> 8) & 255}.${ipSeq & 255}`;

export async function call(node: Node, method: string, path: string, opts: CallOptions = {}): Promise<Reply> {
  const headers: Record<string, string> = { "x-forwarded-for": opts.ip ?? freshIp(), ...opts.headers };
  if (opts.key) headers["x-service-key"] = opts.key;
  if (opts.bearer) {
    headers.authorization = `Bearer ${opts.bearer.accessToken}`;
    headers["x-service-app"] = opts.bearer.appId;
  }
  if (opts.developer) headers.authorization = `Bearer ${opts.developer}`;
  let body: BodyInit | undefined = opts.raw;
  if (opts.body !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(opts.body);
  }
  const res = await fetch(node.url + path, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export interface Cluster {
  nodes: Node[];
  databaseUrl: string;
  secretKey: string;
  /** The CLI's data directory (and, without S3, every node's). */
  dataDir: string;
  /** The environment every node runs with (for the CLI or an in-process core on the same store). */
  env: Record<string, string>;
  /** The next live node in round-robin order. */
  next(): Node;
  /** One request to the next live node (what a load balancer without sticky sessions does). */
  request(method: string, path: string, opts?: CallOptions): Promise<Reply>;
  /** Runs the built CLI against the same database; resolves with its output. */
  cli(args: string[]): { status: number | null; stdout: string; stderr: string };
  stop(): Promise<void>;
}

function spawnNode(name: string, env: Record<string, string>): Promise<Node> {
  const child = spawn(process.execPath, [BIN, "serve", "--port", "0"], { env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    const check = () => {
      // The banner's last line: the default app's hint, or the list of apps.
      if (/developer create --email|^apps: .*$/m.test(out)) {
        child.stdout!.off("data", check);
        const url = /listening on (\S+)/.exec(out)![1]!;
        resolve({ name, url, dataDir: env.TENANTD_DATA_DIR!, child, stdout: () => out, stderr: () => err, exited });
      }
    };
    child.stdout!.on("data", check);
    void exited.then(({ code }) => reject(new Error(`node ${name} exited (${code}) before it served\nstdout: ${out}\nstderr: ${err}`)));
  });
}

/** The local S3 server the nodes share (test/_s3-server.ts `startS3()`). */
export interface SharedBucket {
  endpoint: string;
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/**
 * Starts `n` nodes at once on a fresh database (the first start of a cluster). With `s3`,
 * file blobs go to that bucket and every node has a data directory of its own, so nothing
 * rests on a shared disk; without it the nodes share one data directory (`fs` blobs on a
 * shared folder).
 */
export async function startNodes(n: number, extraEnv: Record<string, string> = {}, opts: { s3?: SharedBucket } = {}): Promise<Cluster> {
  const db = await createTestDatabase({ empty: true });
  const dataDir = mkdtempSync(join(tmpdir(), "tenantd-nodes-"));
  const dirs = [dataDir];
  const secretKey = randomBytes(32).toString("hex");
  const storage: Record<string, string> = opts.s3
    ? {
        TENANTD_STORAGE: "s3",
        TENANTD_S3_BUCKET: opts.s3.bucket,
        TENANTD_S3_ENDPOINT: opts.s3.endpoint,
        TENANTD_S3_ACCESS_KEY_ID: opts.s3.accessKeyId,
        TENANTD_S3_SECRET_ACCESS_KEY: opts.s3.secretAccessKey,
      }
    : {};
  const env: Record<string, string> = {
    ...TEST_ARGON2_ENV,
    TENANTD_DATABASE_URL: db.url,
    TENANTD_SECRET_KEY: secretKey,
    TENANTD_DATA_DIR: dataDir,
    TENANTD_TRUST_PROXY: "loopback",
    TENANTD_ACCESS_LOG: "false",
    TENANTD_DATABASE_POOL_MAX: "5",
    ...storage,
    ...extraEnv,
  };
  const names = ["A", "B", "C", "D", "E"].slice(0, n);
  const ownDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "tenantd-node-"));
    dirs.push(dir);
    return dir;
  };
  const started = await Promise.allSettled(names.map((name) => spawnNode(name, opts.s3 ? { ...env, TENANTD_DATA_DIR: ownDir() } : env)));
  const nodes = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
  const stop = async () => {
    for (const node of nodes) {
      if (node.child.exitCode === null && node.child.signalCode === null) {
        node.child.kill("SIGKILL");
        await node.exited;
      }
    }
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await db.drop();
  };
  const failed = started.find((s) => s.status === "rejected");
  if (failed) {
    await stop();
    throw (failed as PromiseRejectedResult).reason;
  }
  let turn = 0;
  const live = () => nodes.filter((node) => node.child.exitCode === null && node.child.signalCode === null);
  const cluster: Cluster = {
    nodes,
    databaseUrl: db.url,
    secretKey,
    dataDir,
    env,
    next() {
      const up = live();
      return up[turn++ % up.length]!;
    },
    request: (method, path, opts) => call(cluster.next(), method, path, opts),
    cli(args) {
      const r = spawnSync(process.execPath, [BIN, ...args], { env: { ...cleanEnv(), ...env }, encoding: "utf8" });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    stop,
  };
  return cluster;
}
