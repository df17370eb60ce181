// Realtime delivery at load (issue 41): SUBSCRIBERS SSE streams on one `tenantd serve`-like
// process (a child, so the clients' work is not the server's), WRITES_PER_SECOND record
// creates spread over the tenants for SECONDS; each stream follows one bucket of 100, so it
// matches about 1 % of its tenant's writes. Prints delivery latency (write sent → event
// read, same machine), events lost or repeated, and the server's RSS.
//   npm run build && SUBSCRIBERS=2000 WRITES_PER_SECOND=500 SECONDS=20 node bench/realtime.mjs
//   DATABASE_URL=postgres://… node bench/realtime.mjs     (PostgreSQL instead of SQLite)
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const SUBSCRIBERS = Number(process.env.SUBSCRIBERS ?? 1000);
const PER_TENANT = 10;
const WRITES_PER_SECOND = Number(process.env.WRITES_PER_SECOND ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 15);
const BUCKETS = 100;

if (process.argv[2] === "server") {
  const { createServer } = await import("node:http");
  const { createTenantBackend, toNodeHandler } = await import("../dist/index.js");
  const backend = await createTenantBackend({
    dataDir: process.argv[3],
    logger: "error",
    accessLog: false,
    argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 },
    rateLimit: false,
    realtime: { maxConnectionsPerIp: 1_000_000, maxConnectionsPerTenant: PER_TENANT },
    ...(process.env.DATABASE_URL && { database: { url: process.env.DATABASE_URL } }),
  });
  const server = createServer(toNodeHandler(backend));
  server.listen(0, "127.0.0.1", () => process.send({ url: `http://127.0.0.1:${server.address().port}`, key: backend.defaultApp.publishableKey, appId: backend.defaultApp.id }));
  process.on("message", async (m) => {
    if (m === "rss") process.send({ rss: Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024 });
    if (m === "stop") {
      server.closeAllConnections?.();
      await backend.close();
      process.exit(0);
    }
  });
} else {
  const dataDir = mkdtempSync(join(tmpdir(), "tenantd-realtime-bench-"));
  const child = fork(new URL(import.meta.url).pathname, ["server", dataDir], { stdio: "inherit" });
  const ask = (m) => new Promise((resolve) => { child.once("message", resolve); if (m) child.send(m); });
  const { url, key, appId } = await ask();
  const tenants = [];
  for (let i = 0; i < Math.ceil(SUBSCRIBERS / PER_TENANT); i++) {
    const res = await fetch(`${url}/api/v1/auth/signup`, { method: "POST", headers: { "x-service-key": key, "content-type": "application/json" }, body: JSON.stringify({ email: `rt${i}@example.com`, password: "correct horse battery" }) });
    const body = await res.json();
    tenants.push({ headers: { authorization: `Bearer ${body.accessToken}`, "x-service-app": appId }, expected: new Map() });
  }
  const rssIdle = (await ask("rss")).rss;

  // Every stream counts what it received per record id: lost and repeated events show.
  const latencies = [];
  const received = new Map(); // `${stream}:${recordId}` → count
  let opened = 0;
  async function subscriber(n) {
    const tenant = tenants[Math.floor(n / PER_TENANT)];
    const bucket = n % BUCKETS;
    const res = await fetch(`${url}/api/v1/realtime`, { headers: tenant.headers });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let at;
      while ((at = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, at);
        buffer = buffer.slice(at + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (event === "ready") {
          const stream = JSON.parse(data).stream;
          await fetch(`${url}/api/v1/realtime/subscriptions`, { method: "POST", headers: { ...tenant.headers, "content-type": "application/json" }, body: JSON.stringify({ stream, collection: "items", filter: { bucket } }) });
          let list = tenant.expected.get(bucket);
          if (!list) tenant.expected.set(bucket, (list = []));
          list.push(n);
          opened++;
        } else if (event === "created") {
          const d = JSON.parse(data);
          latencies.push(Date.now() - d.record.data.sentAt);
          const k = `${n}:${d.id}`;
          received.set(k, (received.get(k) ?? 0) + 1);
        }
      }
    }
  }
  for (let n = 0; n < SUBSCRIBERS; n += 100) {
    for (let i = n; i < Math.min(n + 100, SUBSCRIBERS); i++) void subscriber(i).catch(() => undefined);
    while (opened < Math.min(n + 100, SUBSCRIBERS)) await new Promise((r) => setTimeout(r, 20));
  }
  const rssStreams = (await ask("rss")).rss;

  const writes = [];
  const started = Date.now();
  let sent = 0;
  while (Date.now() - started < SECONDS * 1000) {
    const due = Math.floor(((Date.now() - started) / 1000) * WRITES_PER_SECOND);
    const batch = [];
    for (; sent < due; sent++) {
      const tenant = tenants[sent % tenants.length];
      const bucket = Math.floor(Math.random() * BUCKETS);
      batch.push(
        fetch(`${url}/api/v1/data/items`, { method: "POST", headers: { ...tenant.headers, "content-type": "application/json" }, body: JSON.stringify({ data: { bucket, sentAt: Date.now() } }) })
          .then((r) => r.json())
          .then((b) => writes.push({ tenant, bucket, id: b.record.id })),
      );
    }
    await Promise.all(batch);
    await new Promise((r) => setTimeout(r, 5));
  }
  await new Promise((r) => setTimeout(r, 2000));
  const rssLoad = (await ask("rss")).rss;

  let expected = 0;
  let lost = 0;
  let repeated = 0;
  for (const w of writes) {
    for (const n of w.tenant.expected.get(w.bucket) ?? []) {
      expected++;
      const c = received.get(`${n}:${w.id}`) ?? 0;
      if (c === 0) lost++;
      if (c > 1) repeated++;
    }
  }
  latencies.sort((a, b) => a - b);
  const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? null;
  console.log(
    JSON.stringify({
      engine: process.env.DATABASE_URL ? "postgres" : "sqlite",
      subscribers: SUBSCRIBERS,
      writes: writes.length,
      writesPerSecond: +(writes.length / SECONDS).toFixed(0),
      events: latencies.length,
      expected,
      lost,
      repeated,
      latencyMs: { p50: q(0.5), p99: q(0.99), max: latencies.at(-1) ?? null },
      rssMB: { idle: +(rssIdle / 1048576).toFixed(0), streamsOpen: +(rssStreams / 1048576).toFixed(0), underLoad: +(rssLoad / 1048576).toFixed(0) },
    }),
  );
  child.send("stop");
  await new Promise((r) => child.once("exit", r));
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}
