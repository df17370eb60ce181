import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { call, freshIp, startNodes, type Cluster, type Node } from "./_nodes.ts";
import { startReceiver } from "./_webhook-receiver.ts";
import { multipart, BOUNDARY } from "./files-helpers.ts";
import { tempDir } from "./_helpers.ts";
import { createCore } from "../src/core.ts";
import { enqueueEvent } from "../src/webhooks/events.ts";
import { startS3, type S3Server } from "./_s3-server.ts";

/**
 * Three `tenantd serve` processes on one PostgreSQL database and one local S3 server, each
 * with a data directory of its own, and a client that spreads its requests round-robin over
 * them as a load balancer without sticky sessions would. Whatever a single process
 * guarantees must hold across the three.
 */

const PASSWORD = "a long password";
const PER_IP = 6;
let cluster: Cluster;
let s3: S3Server;
let A: Node, B: Node, C: Node;
let appId: string;
let key: string;
let developer: string;

interface Tenant {
  id: string;
  email: string;
  bearer: { accessToken: string; appId: string };
  refreshToken: string;
}

let emailSeq = 0;
async function signup(node?: Node): Promise<Tenant> {
  const email = `user${++emailSeq}-${Date.now().toString(36)}@example.com`;
  const res = node ? await call(node, "POST", "/api/v1/auth/signup", { key, body: { email, password: PASSWORD } }) : await cluster.request("POST", "/api/v1/auth/signup", { key, body: { email, password: PASSWORD } });
  expect(res.status, res.text).toBe(201);
  return { id: res.body.tenant.id, email, bearer: { accessToken: res.body.accessToken, appId }, refreshToken: res.body.refreshToken };
}

const admin = (method: string, path: string, body?: unknown, node?: Node) =>
  node ? call(node, method, `/api/v1/admin/apps/${appId}${path}`, { developer, body }) : cluster.request(method, `/api/v1/admin/apps/${appId}${path}`, { developer, body });

/** Waits until every node applies the app's new settings (the test of how soon is its own, below). */
async function settingsEverywhere(check: (node: Node) => Promise<boolean>) {
  for (const node of cluster.nodes) await vi.waitFor(async () => expect(await check(node)).toBe(true), { timeout: 5000, interval: 20 });
}

beforeAll(async () => {
  s3 = await startS3();
  cluster = await startNodes(3, { TENANTD_RATE_LIMIT_PER_IP: String(PER_IP), TENANTD_WEBHOOKS_ALLOW_INSECURE: "true" }, { s3 });
  [A, B, C] = cluster.nodes as [Node, Node, Node];
  const created = cluster.cli(["developer", "create", "--email", "dev@example.com", "--password", "developer password"]);
  expect(created.status, created.stderr).toBe(0);
  const login = await call(A, "POST", "/api/v1/developer/login", { body: { email: "dev@example.com", password: "developer password" } });
  expect(login.status, login.text).toBe(200);
  developer = login.body.token;
  const apps = await call(B, "GET", "/api/v1/admin/apps", { developer });
  expect(apps.status, apps.text).toBe(200);
  expect(apps.body.apps).toHaveLength(1);
  appId = apps.body.apps[0].id;
  key = apps.body.apps[0].publishableKey;
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  await s3?.stop();
});

describe("three nodes on one PostgreSQL", () => {
  it("started together on an empty database: one migrated it and one created the default app", () => {
    const created = cluster.nodes.filter((n) => n.stdout().includes("Created the default app"));
    expect(created).toHaveLength(1);
    for (const n of cluster.nodes.filter((x) => !created.includes(x))) expect(n.stdout()).toMatch(/^apps: default — /m);
    // Each banner names the database (host, port, name; never the user or password).
    const db = new URL(cluster.databaseUrl);
    for (const n of cluster.nodes) {
      expect(n.stdout()).toContain(`store: PostgreSQL, ${db.hostname}:${db.port}${db.pathname} (pool of`);
      if (db.password) expect(n.stdout()).not.toContain(db.password);
    }
  });

  it("a logout on A refuses the access token on B and C at once", async () => {
    const t = await signup(A);
    for (const node of [A, B, C]) expect((await call(node, "GET", "/api/v1/auth/me", { bearer: t.bearer })).status).toBe(200);
    expect((await call(A, "POST", "/api/v1/auth/logout", { bearer: t.bearer, body: {} })).status).toBe(204);
    for (const node of [B, C, A]) {
      const res = await call(node, "GET", "/api/v1/auth/me", { bearer: t.bearer });
      expect({ status: res.status, error: res.body?.error }).toEqual({ status: 401, error: "session_ended" });
    }
  });

  it("a refresh token rotated on A: its successor refreshes on C, and that access token works on B", async () => {
    const t = await signup(A);
    const rotated = await call(A, "POST", "/api/v1/auth/refresh", { key, body: { refreshToken: t.refreshToken } });
    expect(rotated.status, rotated.text).toBe(200);
    const next = await call(C, "POST", "/api/v1/auth/refresh", { key, body: { refreshToken: rotated.body.refreshToken } });
    expect(next.status, next.text).toBe(200);
    expect((await call(B, "GET", "/api/v1/auth/me", { bearer: { accessToken: next.body.accessToken, appId } })).status).toBe(200);
  });

  it("an app setting changed through A applies on B and C within a second", async () => {
    const origin = `https://n${Date.now().toString(36)}.example.com`;
    const preflight = (node: Node) => call(node, "OPTIONS", "/api/v1/auth/login", { headers: { origin, "access-control-request-method": "POST" } });
    expect((await preflight(B)).headers.get("access-control-allow-origin")).toBeNull();
    const res = await admin("PATCH", "", { settings: { corsOrigins: [origin] } }, A);
    expect(res.status, res.text).toBe(200);
    for (const node of [B, C]) {
      await vi.waitFor(async () => expect((await preflight(node)).headers.get("access-control-allow-origin")).toBe(origin), { timeout: 1000, interval: 20 });
    }
  });

  it("60 concurrent usage increments spread over the nodes against a limit of 20: exactly 20 succeed", async () => {
    const res = await admin("PATCH", "", { settings: { billing: { defaultEntitlements: { exports: 20 } } } });
    expect(res.status, res.text).toBe(200);
    const t = await signup();
    await settingsEverywhere(async (node) => (await call(node, "GET", "/api/v1/billing/usage/exports", { bearer: t.bearer })).body?.limit === 20);
    const results = await Promise.all(Array.from({ length: 60 }, () => cluster.request("POST", "/api/v1/billing/usage/exports/increment", { bearer: t.bearer, body: {} })));
    const ok = results.filter((r) => r.status === 200);
    expect(ok).toHaveLength(20);
    expect(results.filter((r) => r.status === 402 && r.body.error === "limit_reached")).toHaveLength(40);
    expect(ok.map((r) => r.body.count).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (const node of [A, B, C]) expect((await call(node, "GET", "/api/v1/billing/usage/exports", { bearer: t.bearer })).body).toEqual({ count: 20, period: "monthly", limit: 20 });
  });

  it("6 concurrent consumes of the last family seat, spread over the nodes: exactly 1 member joins", async () => {
    const plan = await admin("POST", "/plans", { name: "Family", slug: "family", priceCents: 900, entitlements: { family_seats: 2 } });
    expect(plan.status, plan.text).toBe(201);
    const owner = await signup();
    const gift = await admin("POST", `/tenants/${owner.id}/billing/gift`, { planId: plan.body.plan.id });
    expect(gift.status, gift.text).toBe(200);
    const invite = async () => {
      const res = await cluster.request("POST", "/api/v1/tenants/me/family-invites", { bearer: owner.bearer, body: {} });
      expect(res.status, res.text).toBe(201);
      return res.body.invite.token as string;
    };
    const first = await cluster.request("POST", "/api/v1/auth/family-invite/consume", { key, body: { token: await invite(), email: `first-${owner.id}@example.com`, password: PASSWORD } });
    expect(first.status, first.text).toBe(201);
    const last = await invite();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => cluster.request("POST", "/api/v1/auth/family-invite/consume", { key, body: { token: last, email: `seat${i}-${owner.id}@example.com`, password: PASSWORD } })),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expect(r.status, r.text).toBeGreaterThanOrEqual(400);
    const members = await cluster.request("GET", "/api/v1/tenants/me/family/members", { bearer: owner.bearer });
    expect(members.status, members.text).toBe(200);
    expect(members.body.members).toHaveLength(2);
  });

  it("a unique field under concurrent creates on all nodes gives exactly one record", async () => {
    const res = await admin("PATCH", "", { settings: { collections: { items: { unique: ["slug"] } } } });
    expect(res.status, res.text).toBe(200);
    const t = await signup();
    let probes = 0;
    await settingsEverywhere(async (node) => {
      // A value no other create uses, twice: a node that knows the field is unique refuses the second.
      const slug = `probe-${node.name}-${++probes}`;
      const create = () => call(node, "POST", "/api/v1/data/items", { bearer: t.bearer, body: { data: { slug } } });
      expect((await create()).status).toBe(201);
      return (await create()).status === 409;
    });
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => cluster.request("POST", "/api/v1/data/items", { bearer: t.bearer, body: { data: { slug: "the-one", n: i } } })));
    expect(results.filter((r) => r.status === 201)).toHaveLength(1);
    for (const r of results.filter((x) => x.status !== 201)) expect({ status: r.status, error: r.body?.error }).toEqual({ status: 409, error: "conflict" });
    const list = await call(C, "GET", "/api/v1/data/items?filter=" + encodeURIComponent(JSON.stringify({ slug: "the-one" })), { bearer: t.bearer });
    expect(list.status, list.text).toBe(200);
    expect(list.body.records).toHaveLength(1);
  });

  it("per-IP login limits count requests across the nodes", async () => {
    const ip = freshIp();
    const results = [];
    // One at a time, round-robin: each node alone would see at most 3 of the 9.
    for (let i = 0; i < PER_IP + 3; i++) results.push(await cluster.request("POST", "/api/v1/auth/login", { key, ip, body: { email: `nobody${i}@example.com`, password: "wrong password" } }));
    expect(results.map((r) => r.status)).toEqual([...Array(PER_IP).fill(401), 429, 429, 429]);
    expect(Number(results.at(-1)!.headers.get("retry-after"))).toBeGreaterThan(0);
    // Another client is not affected.
    expect((await cluster.request("POST", "/api/v1/auth/login", { key, body: { email: "nobody@example.com", password: "wrong password" } })).status).toBe(401);
  });

  it("an account's sign-in backoff counts wrong passwords made on every node", async () => {
    const t = await signup();
    const ip = freshIp();
    for (let i = 0; i < 5; i++) expect((await cluster.request("POST", "/api/v1/auth/login", { key, ip, body: { email: t.email, password: "wrong password" } })).status).toBe(401);
    // The sixth attempt from that client, even with the right password and on whichever node, must wait.
    const res = await cluster.request("POST", "/api/v1/auth/login", { key, ip, body: { email: t.email, password: PASSWORD } });
    expect({ status: res.status, error: res.body?.error }).toEqual({ status: 429, error: "rate_limited" });
  });

  it("50 webhook events raised across the nodes are each received exactly once", async () => {
    const receiver = await startReceiver();
    const config = await admin("PUT", "/event-webhook-config", { url: receiver.url });
    expect(config.status, config.text).toBe(200);
    const tenants = await Promise.all(Array.from({ length: 50 }, () => signup()));
    const deleted = await Promise.all(tenants.map((t) => cluster.request("POST", "/api/v1/tenants/me/delete", { bearer: t.bearer, body: {} })));
    for (const r of deleted) expect(r.status, r.text).toBe(200);
    const ids = () => receiver.received.map((r) => JSON.parse(r.raw.toString("utf8")) as { event: string; tenantId: string }).filter((e) => e.event === "tenant.deleted").map((e) => e.tenantId);
    await vi.waitFor(() => expect(ids()).toHaveLength(50), { timeout: 15_000, interval: 50 });
    // Every node keeps polling the queue: give them time to send a duplicate, if they would.
    await vi.waitFor(
      async () => {
        const log = await admin("GET", "/webhook-deliveries?limit=100");
        expect(log.body.queued).toBe(0);
        expect(log.body.deliveries.filter((d: { status: string }) => d.status === "delivered")).toHaveLength(50);
      },
      { timeout: 10_000, interval: 100 },
    );
    await new Promise((r) => setTimeout(r, 1500));
    expect(ids().sort()).toEqual(tenants.map((t) => t.id).sort());
  }, 60_000);

  it("an event left on the queue by a process that stopped before dispatching it is delivered by a node", async () => {
    const receiver = await startReceiver();
    expect((await admin("PUT", "/event-webhook-config", { url: receiver.url })).status).toBe(200);
    // A process with no dispatcher (as a node killed right after the request that raised it).
    const gone = createCore({ database: { url: cluster.databaseUrl, pool: { max: 2 } }, secretKey: cluster.secretKey, dataDir: tempDir(), rateLimit: false });
    await gone.ready;
    for (let i = 0; i < 3; i++) await enqueueEvent(gone, { appId, event: "tenant.deleted", tenantId: `orphan-${i}`, email: null, payload: { reason: "self_delete", locale: "en" } });
    await gone.close();
    await vi.waitFor(() => expect(receiver.received).toHaveLength(3), { timeout: 10_000, interval: 50 });
    expect(receiver.received.map((r) => JSON.parse(r.raw.toString("utf8")).tenantId).sort()).toEqual(["orphan-0", "orphan-1", "orphan-2"]);
  });

  it("a file uploaded through A is stored in S3 and served by B and C, whole and by range", async () => {
    const t = await signup();
    const data = Buffer.from(`bytes from node A ${Date.now()} `.repeat(50));
    const up = await call(A, "POST", "/api/v1/files/upload", {
      bearer: t.bearer,
      raw: Buffer.from(multipart([{ filename: "a.txt", type: "text/plain", data }])),
      headers: { "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
    });
    expect(up.status, up.text).toBe(201);
    const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");
    const path = new URL(up.body.file.url).pathname;
    for (const node of [B, C]) {
      expect((await call(node, "GET", `/api/v1/files/${up.body.file.id}`, { bearer: t.bearer })).body.file.id).toBe(up.body.file.id);
      const whole = await fetch(node.url + path);
      expect(whole.status).toBe(200);
      expect(sha(Buffer.from(await whole.arrayBuffer()))).toBe(sha(data));
      const part = await fetch(node.url + path, { headers: { range: "bytes=10-19" } });
      expect(part.status).toBe(206);
      expect(Buffer.from(await part.arrayBuffer())).toEqual(data.subarray(10, 20));
    }
    // No node keeps a blob in its own data directory: the bucket holds them.
    for (const node of [A, B, C]) expect(existsSync(join(node.dataDir, "files"))).toBe(false);
    expect(new Set(cluster.nodes.map((n) => n.dataDir)).size).toBe(3);
  });

  // Last: it kills a node.
  it("SIGKILL of one node during a write load loses no acknowledged record; the other two keep answering", async () => {
    const t = await signup();
    const acknowledged: string[] = [];
    const afterKill: number[] = [];
    let killed = false;
    let sent = 0;
    const worker = async () => {
      while (sent < 150) {
        const n = sent++;
        const node = cluster.next();
        try {
          const res = await call(node, "POST", "/api/v1/data/notes", { bearer: t.bearer, body: { data: { n } } });
          if (res.status === 201) acknowledged.push(res.body.record.id);
          else expect(res.status, res.text).toBe(201);
          if (killed && node !== C) afterKill.push(res.status);
        } catch {
          // The killed node drops its connections: not acknowledged, a client would retry.
          expect(node).toBe(C);
        }
        if (n === 50 && !killed) {
          killed = true;
          C.child.kill("SIGKILL");
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, worker));
    expect((await C.exited).signal).toBe("SIGKILL");
    expect(afterKill.length).toBeGreaterThan(30);
    expect(afterKill.every((s) => s === 201)).toBe(true);
    const ids = new Set<string>();
    for (let offset = 0; ; offset += 100) {
      const page = await cluster.request("GET", `/api/v1/data/notes?limit=100&offset=${offset}`, { bearer: t.bearer });
      expect(page.status, page.text).toBe(200);
      for (const r of page.body.records) ids.add(r.id);
      if (page.body.records.length < 100) break;
    }
    for (const id of acknowledged) expect(ids.has(id), id).toBe(true);
    for (const node of [A, B]) expect((await call(node, "GET", "/api/v1/health/ready")).status).toBe(200);
  }, 60_000);
});
