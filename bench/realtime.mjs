// Realtime delivery at load (issue 41's targets). NODES server processes (children, so the
// clients' work is not the servers'), SUBSCRIBERS SSE streams held by CLIENTS client processes
// (one process cannot hold 10,000 streams and read them in time), each stream on a session of
// its own (a login) and following one bucket of 100 of its tenant's `items`, so it matches
// about 1 % of its tenant's writes. The parent writes WRITES_PER_SECOND creates for SECONDS,
// spread over the tenants and the nodes. Prints, as one JSON line: delivery latency from the
// server's stamp of the write (`createdAt`) to the event's arrival, and from the request's
// sending; cross-node latency alone (writer's node ≠ stream's node); events lost and
// repeated (each stream's events against the writes that match it); every server's RSS
// (idle, streams open, most under load) and the load average.
//   npm run build && SUBSCRIBERS=10000 WRITES_PER_SECOND=1000 SECONDS=30 node bench/realtime.mjs
//   ENGINE=postgres …             PostgreSQL (a fresh embedded server, bench/postgres-server.mjs)
//   ENGINE=postgres NODES=3 …     three nodes on it, streams and writes spread over them
//   STORM=1 …                     halfway through, every stream drops and reconnects with
//                                 Last-Event-ID while the writes go on (lost/repeated: 0, 0)
//   PROFILE=dir …                 node --cpu-prof of every server, written into dir
import { fork } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";

const SUBSCRIBERS = Number(process.env.SUBSCRIBERS ?? 1000);
const PER_TENANT = Number(process.env.PER_TENANT ?? 10);
const WRITES_PER_SECOND = Number(process.env.WRITES_PER_SECOND ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 15);
const NODES = Number(process.env.NODES ?? 1);
const CLIENTS = Number(process.env.CLIENTS ?? Math.max(1, Math.ceil(SUBSCRIBERS / 2500)));
const STORM = process.env.STORM === "1";
const BUCKETS = 100;
const PASSWORD = "correct horse battery";
const self = new URL(import.meta.url).pathname;
const load = () => Math.round(loadavg()[0] * 10) / 10;
/**
 * A JSON POST on a few kept-alive connections: fetch would open one per request in flight
 * beside the 10,000 streams, and the server's 20,000 file descriptors would run out.
 */
const agent = new Agent({ keepAlive: true, maxSockets: 32 });
const post = (url, headers, body) =>
  new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(url, { method: "POST", agent, headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(text) } }, (res) => {
      let reply = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (reply += d));
      res.on("end", () => resolve({ status: res.statusCode, text: async () => reply, json: async () => JSON.parse(reply) }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(text);
  });
const rssOf = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]) * 1024;

if (process.argv[2] === "server") {
  const { createServer } = await import("node:http");
  const { createTenantBackend, toNodeHandler } = await import("../dist/index.js");
  const backend = await createTenantBackend({
    dataDir: process.argv[3],
    secretKey: process.env.BENCH_SECRET_KEY,
    logger: "error",
    accessLog: false,
    argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 },
    rateLimit: false,
    realtime: { maxConnectionsPerIp: 1_000_000, maxConnectionsPerTenant: PER_TENANT },
    ...(process.env.DATABASE_URL && { database: { url: process.env.DATABASE_URL } }),
  });
  const server = createServer(toNodeHandler(backend));
  server.keepAliveTimeout = 60_000;
  let maxRss = 0;
  setInterval(() => (maxRss = Math.max(maxRss, rssOf())), 500).unref();
  // A storm's 10,000 reconnects arrive at once: Node's default backlog (511) times most of them out.
  server.listen({ port: 0, host: "127.0.0.1", backlog: 4096 }, () => process.send({ url: `http://127.0.0.1:${server.address().port}`, key: backend.defaultApp?.publishableKey, appId: backend.defaultApp?.id }));
  process.on("message", async (m) => {
    if (m === "rss") {
      const rss = rssOf();
      process.send({ rss, maxRss: Math.max(maxRss, rss), streams: backend.core.realtime?.streamCount });
      maxRss = 0;
    }
    if (m === "stop") {
      server.closeAllConnections?.();
      await backend.close();
      process.exit(0);
    }
  });
} else if (process.argv[2] === "client") {
  // A share of the streams: { from, to } subscriber numbers; tenants' emails; the node URLs.
  const { from, to, urls, key, appId, emails } = await new Promise((r) => process.once("message", r));
  const latency = { commit: [], sent: [], crossCommit: [] };
  const received = []; // [subscriber, recordId] per event
  let opened = 0;
  let reconnects = 0;
  let resets = 0;
  const refusals = {};
  const serverErrors = [];
  const streams = new Map(); // n → { abort, lastEventId }
  /**
   * One stream, as tenantd/client keeps it: reconnects with its last id after an end or a
   * refusal (250 ms doubling to 10 s, at once after the storm's drop); only a stream that was
   * never ready fails the run.
   */
  async function stream(n, headers, url, lastEventId) {
    const bucket = n % BUCKETS;
    const node = n % urls.length;
    let everReady = false;
    let retryMs = 250;
    for (;;) {
      const s = { abort: new AbortController(), lastEventId, storm: false };
      streams.set(n, s);
      try {
        const res = await fetch(`${url}/api/v1/realtime`, { headers: { ...headers, ...(lastEventId && { "last-event-id": lastEventId }) }, signal: s.abort.signal });
        if (res.status !== 200) {
          refusals[res.status] = (refusals[res.status] ?? 0) + 1;
          throw new Error(`stream ${n}: ${res.status} ${await res.text()}`);
        }
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let at;
          while ((at = buffer.indexOf("\n\n")) >= 0) {
            const block = buffer.slice(0, at);
            buffer = buffer.slice(at + 2);
            const id = /^id: (.*)$/m.exec(block)?.[1];
            if (id !== undefined) s.lastEventId = id;
            const event = /^event: (.*)$/m.exec(block)?.[1];
            const data = /^data: (.*)$/m.exec(block)?.[1];
            if (event === "ready") {
              const { stream: streamId } = JSON.parse(data);
              const sub = await post(`${url}/api/v1/realtime/subscriptions`, headers, { stream: streamId, collection: "items", filter: { bucket } });
              if (sub.status !== 201) {
                refusals[`subscribe ${sub.status}`] = (refusals[`subscribe ${sub.status}`] ?? 0) + 1;
                throw new Error(`subscribe ${n}: ${sub.status} ${await sub.text()}`);
              }
              if (!everReady) opened++;
              everReady = true;
              s.ready = true;
              retryMs = 250;
            } else if (event === "created") {
              const d = JSON.parse(data);
              const now = Date.now();
              latency.commit.push(now - Date.parse(d.record.createdAt));
              latency.sent.push(now - d.record.data.sentAt);
              if (d.record.data.node !== node) latency.crossCommit.push(now - Date.parse(d.record.createdAt));
              received.push([n, d.id]);
            } else if (event === "reset") {
              resets++;
            } else if (event === "dropped" || event === "ended" || event === "closing") {
              refusals[`ended by ${event}`] = (refusals[`ended by ${event}`] ?? 0) + 1;
            }
          }
        }
      } catch (e) {
        if (!everReady) throw e;
        if (!s.storm) {
          const k = `error ${String(e?.cause?.code ?? e?.code ?? e?.message ?? e).slice(0, 60)}`;
          refusals[k] = (refusals[k] ?? 0) + 1;
        }
      }
      s.ready = false;
      s.abort.abort();
      lastEventId = s.lastEventId;
      reconnects++;
      if (!s.storm) {
        await new Promise((r) => setTimeout(r, retryMs));
        retryMs = Math.min(retryMs * 2, 10_000);
      }
    }
  }

  async function start(n) {
    const url = urls[n % urls.length];
    let res;
    // A 500 is counted and tried again (PostgreSQL: postgres.js's UNSAFE_TRANSACTION under load, bench/NOTES.md).
    for (let attempt = 0; ; attempt++) {
      res = await post(`${url}/api/v1/auth/login`, { "x-service-key": key }, { email: emails[Math.floor(n / PER_TENANT)], password: PASSWORD });
      if (res.status < 500 || attempt === 3) break;
      serverErrors.push(`login: ${await res.text()}`);
    }
    if (res.status !== 200) throw new Error(`login ${n}: ${res.status} ${await res.text()}`);
    const headers = { authorization: `Bearer ${(await res.json()).accessToken}`, "x-service-app": appId };
    return stream(n, headers, url, undefined);
  }
  const failures = [];
  for (let n = from; n < to; n += 50) {
    const batch = [];
    for (let i = n; i < Math.min(n + 50, to); i++) batch.push(start(i).catch((e) => failures.push(String(e?.message ?? e))));
    const want = Math.min(n + 50, to) - from;
    while (opened < want && failures.length === 0) await new Promise((r) => setTimeout(r, 10));
    if (failures.length) break;
  }
  process.send({ opened, failures });
  process.on("message", (m) => {
    if (m === "storm") {
      for (const s of streams.values()) {
        s.storm = true;
        s.abort.abort();
      }
    }
    if (m === "count") process.send({ count: received.length });
    if (m === "results") process.send({ latency, received, reconnects, resets, refusals, failures, serverErrors, readyAtEnd: [...streams.values()].filter((x) => x.ready).length, rss: rssOf() });
  });
} else {
  const runLoad = [load()];
  const dataDir = mkdtempSync(join(tmpdir(), "tenantd-realtime-bench-"));
  let pg;
  if (process.env.ENGINE === "postgres") {
    const { startPostgresServer } = await import("./postgres-server.mjs");
    pg = await startPostgresServer();
  }
  const env = { ...process.env, BENCH_SECRET_KEY: randomBytes(32).toString("hex"), ...(pg && { DATABASE_URL: pg.url }) };
  const profile = process.env.PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${process.env.PROFILE}`] : [];
  const startServer = async () => {
    const child = fork(self, ["server", dataDir], { stdio: "inherit", env, execArgv: profile });
    const info = await new Promise((resolve) => child.once("message", resolve));
    return { child, ...info };
  };
  const ask = (child, m) => new Promise((resolve) => { child.once("message", resolve); child.send(m); });
  // The first node migrates the store; the others start on it.
  const servers = [await startServer()];
  for (let i = 1; i < NODES; i++) servers.push(await startServer());
  const { key, appId } = servers[0];
  const urls = servers.map((s) => s.url);
  const rss = async () => Promise.all(servers.map((s) => ask(s.child, "rss")));

  const tenants = [];
  // SUBSCRIBERS=0 TENANTS=100: the same writes with no stream anywhere (realtime's write path idle).
  const tenantCount = Math.max(Number(process.env.TENANTS ?? 1), Math.ceil(SUBSCRIBERS / PER_TENANT));
  for (let i = 0; i < tenantCount; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, tenantCount - i) }, async (_, j) => {
        const email = `rt${i + j}@example.com`;
        const res = await post(`${urls[(i + j) % NODES]}/api/v1/auth/signup`, { "x-service-key": key }, { email, password: PASSWORD });
        const body = await res.json();
        tenants[i + j] = { email, headers: { authorization: `Bearer ${body.accessToken}`, "x-service-app": appId } };
      }),
    );
  }
  const rssIdle = await rss();

  const openedAt = Date.now();
  const clients = [];
  const share = Math.ceil(SUBSCRIBERS / CLIENTS);
  await Promise.all(
    Array.from({ length: SUBSCRIBERS > 0 ? CLIENTS : 0 }, async (_, c) => {
      const child = fork(self, ["client"], { stdio: "inherit", env });
      clients.push(child);
      const from = c * share;
      const to = Math.min(SUBSCRIBERS, from + share);
      const ready = new Promise((resolve) => child.once("message", resolve));
      child.send({ from, to, urls, key, appId, emails: tenants.map((t) => t.email) });
      const { opened, failures } = await ready;
      if (failures.length) throw new Error(`client ${c}: ${failures.slice(0, 3).join("; ")}`);
      if (opened !== to - from) throw new Error(`client ${c}: ${opened} of ${to - from} streams`);
    }),
  );
  const openSeconds = (Date.now() - openedAt) / 1000;
  runLoad.push(load());
  const rssStreams = await rss();

  const writes = [];
  let writeFailures = 0;
  const writeErrors = [];
  const started = Date.now();
  let sent = 0;
  let stormAt;
  const inFlight = new Set();
  while (Date.now() - started < SECONDS * 1000) {
    if (STORM && stormAt === undefined && Date.now() - started >= (SECONDS * 1000) / 2) {
      stormAt = Date.now() - started;
      for (const c of clients) c.send("storm");
    }
    const due = Math.floor(((Date.now() - started) / 1000) * WRITES_PER_SECOND);
    for (; sent < due; sent++) {
      const t = sent % tenants.length;
      const node = sent % NODES;
      const bucket = Math.floor(Math.random() * BUCKETS);
      const p = post(`${urls[node]}/api/v1/data/items`, tenants[t].headers, { data: { bucket, node, sentAt: Date.now() } })
        .then(async (r) => {
          if (r.status !== 201) throw new Error(`${r.status} ${await r.text()}`);
          writes.push({ t, bucket, id: (await r.json()).record.id });
        })
        .catch((e) => {
          writeFailures++;
          if (writeErrors.length < 3) writeErrors.push(String(e?.message ?? e).slice(0, 200));
        })
        .finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(inFlight);
  const writeSeconds = (Date.now() - started) / 1000;
  runLoad.push(load());
  const rssLoad = await rss();
  // Subscriber n: tenant floor(n / PER_TENANT), bucket n % BUCKETS.
  const followers = new Map();
  for (let n = 0; n < SUBSCRIBERS; n++) {
    const k = `${Math.floor(n / PER_TENANT)}:${n % BUCKETS}`;
    followers.set(k, [...(followers.get(k) ?? []), n]);
  }
  const matching = writes.reduce((sum, w) => sum + (followers.get(`${w.t}:${w.bucket}`)?.length ?? 0), 0);
  // Events still on their way arrive late, not lost: wait until every one came, or none for 15 s (a reconnect backs off up to 10 s).
  let settled = 0;
  for (let last = -1, still = Date.now(); ; ) {
    const count = (await Promise.all(clients.map((c) => ask(c, "count")))).reduce((sum, r) => sum + r.count, 0);
    if (count >= matching) break;
    if (count !== last) [last, still] = [count, Date.now()];
    else if (Date.now() - still > 15_000) break;
    await new Promise((r) => setTimeout(r, 250));
    settled = (Date.now() - started) / 1000 - writeSeconds;
  }

  const results = await Promise.all(clients.map((c) => ask(c, "results")));
  const latency = { commit: [], sent: [], crossCommit: [] };
  const received = new Map();
  let reconnects = 0;
  let resets = 0;
  let readyAtEnd = 0;
  const refusals = {};
  const serverErrors = [];
  for (const r of results) {
    readyAtEnd += r.readyAtEnd;
    serverErrors.push(...r.serverErrors);
    resets += r.resets;
    for (const [k, v] of Object.entries(r.refusals)) refusals[k] = (refusals[k] ?? 0) + v;
    for (const k of Object.keys(latency)) for (const v of r.latency[k]) latency[k].push(v);
    for (const [n, id] of r.received) received.set(`${n}:${id}`, (received.get(`${n}:${id}`) ?? 0) + 1);
    reconnects += r.reconnects;
  }
  let expected = 0;
  let lost = 0;
  let repeated = 0;
  for (const w of writes) {
    for (const n of followers.get(`${w.t}:${w.bucket}`) ?? []) {
      expected++;
      const c = received.get(`${n}:${w.id}`) ?? 0;
      if (c === 0) lost++;
      if (c > 1) repeated++;
    }
  }
  const quantiles = (list) => {
    list.sort((a, b) => a - b);
    const q = (p) => list[Math.min(list.length - 1, Math.floor(p * list.length))] ?? null;
    return { n: list.length, p50: q(0.5), p99: q(0.99), max: list.at(-1) ?? null };
  };
  const mb = (n) => Math.round(n / 1048576);
  console.log(
    JSON.stringify({
      engine: pg ? "postgres" : "sqlite",
      nodes: NODES,
      subscribers: SUBSCRIBERS,
      perTenant: PER_TENANT,
      clientProcesses: CLIENTS,
      openSeconds,
      writes: writes.length,
      writeFailures,
      writeErrors: writeErrors.length ? writeErrors : undefined,
      serverErrorsRetried: serverErrors.length ? { count: serverErrors.length, first: serverErrors[0].slice(0, 200) } : undefined,
      writesPerSecond: Math.round(writes.length / writeSeconds),
      reconnects,
      refusedReconnects: Object.keys(refusals).length ? refusals : undefined,
      resets,
      streamsReadyAtEnd: readyAtEnd,
      storm: STORM ? { atMs: stormAt } : undefined,
      events: received.size,
      settledSeconds: Math.round(settled * 10) / 10,
      expected,
      lost,
      repeated,
      latencyFromCommitMs: quantiles(latency.commit),
      latencyFromSendMs: quantiles(latency.sent),
      crossNodeFromCommitMs: NODES > 1 ? quantiles(latency.crossCommit) : undefined,
      rssMB: servers.map((_, i) => ({ idle: mb(rssIdle[i].rss), streamsOpen: mb(rssStreams[i].rss), underLoadMax: mb(rssLoad[i].maxRss), streams: rssStreams[i].streams })),
      clientRssMB: results.map((r) => mb(r.rss)),
      loadAverage: { start: runLoad[0], streamsOpen: runLoad[1], writesEnd: runLoad[2] },
    }),
  );
  for (const c of clients) c.kill();
  await Promise.all(servers.map((s) => new Promise((r) => { s.child.once("exit", r); s.child.send("stop"); })));
  await pg?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
}
