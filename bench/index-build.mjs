// `node bench/index-build.mjs` (after `npm run build`): another app's write latency while one
// app's index builds over a large `records` table (issue 39 item 2: target p99 < 50 ms).
// tenantd runs as a child (tenantd-server.mjs); this process writes as a tenant of a second
// app, `--connections` requests in flight, first on a quiet server, then while an automatic
// index builds (three tenants list on an unindexed field), then while a declared one builds
// (a settings change). After seeding, 3 s of writes are left out (the seed's checkpoint). Flags: --rows <n> (default 1,500,000) --connections <n> (default 4)
// --quiet-seconds <s> (default 3).
import { parseArgs } from "node:util";
import { startChild } from "./children.mjs";
import { call } from "./http.mjs";

const { values: opts } = parseArgs({
  options: {
    rows: { type: "string", default: "1500000" },
    connections: { type: "string", default: "4" },
    "quiet-seconds": { type: "string", default: "3" },
  },
});
const rows = Number(opts.rows);
const connections = Number(opts.connections);
const PER_TENANT = 10_000;

const td = await startChild("./tenantd-server.mjs");
try {
  const signup = async (key, appId, label) => {
    const res = await call(td.url, "POST", "/api/v1/auth/signup", { key, body: { email: `${label}-${Date.now()}@bench.example`, password: "bench password 1234" } });
    if (res.status !== 201) throw new Error(`signup: ${res.status} ${JSON.stringify(res.body)}`);
    return { id: res.body.tenant.id, bearer: { accessToken: res.body.accessToken, appId } };
  };
  const appA = td.app;
  const askers = [];
  for (let i = 0; i < 3; i++) askers.push(await signup(appA.publishableKey, appA.id, `asker${i}`));
  const big = await signup(appA.publishableKey, appA.id, "big");
  const appB = await td.call("apps.create", { name: "neighbour" });
  const neighbour = await signup(appB.publishableKey, appB.id, "neighbour");

  let started = performance.now();
  for (const t of askers) await td.call("seed.rows", { appId: appA.id, tenantId: t.id, collection: "items", count: PER_TENANT });
  await td.call("seed.rows", { appId: appA.id, tenantId: big.id, collection: "items", count: rows - askers.length * PER_TENANT });
  console.log(`seeded ${rows.toLocaleString("en")} records in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  /** The neighbour's creates until `until` settles; latencies in ms. */
  async function writes(until) {
    const ms = [];
    let done = false;
    void until.then(() => (done = true));
    const loop = async () => {
      while (!done) {
        const t0 = performance.now();
        const res = await call(td.url, "POST", "/api/v1/data/notes", { bearer: neighbour.bearer, body: { data: { text: "a note" } } });
        if (res.status !== 201) throw new Error(`neighbour create: ${res.status}`);
        ms.push(performance.now() - t0);
      }
    };
    await Promise.all(Array.from({ length: connections }, loop));
    return ms.sort((a, b) => a - b);
  }
  const pct = (s, p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
  const rowsOut = [];
  const report = (label, ms, buildMs) => {
    const row = { label, writes: ms.length, p50: pct(ms, 50), p99: pct(ms, 99), max: ms.at(-1), buildMs };
    rowsOut.push(row);
    console.log(
      `${label.padEnd(34)} writes ${String(row.writes).padStart(6)}  p50 ${row.p50.toFixed(1).padStart(6)} ms  p99 ${row.p99.toFixed(1).padStart(6)} ms  max ${row.max.toFixed(1).padStart(6)} ms` +
        (buildMs === undefined ? "" : `  build ${(buildMs / 1000).toFixed(1)} s`),
    );
  };

  // The seeding's WAL is checkpointed meanwhile: its writes wait for that, not for a build.
  await writes(new Promise((r) => setTimeout(r, 3000)));
  report("quiet (no build)", await writes(new Promise((r) => setTimeout(r, Number(opts["quiet-seconds"]) * 1000))));

  // Automatic: three tenants with large collections list on an unindexed field.
  started = performance.now();
  for (const t of askers) {
    const res = await call(td.url, "GET", `/api/v1/data/items?filter=${encodeURIComponent('{"status":"s3"}')}&limit=1`, { bearer: t.bearer });
    if (res.status !== 200) throw new Error(`list: ${res.status}`);
  }
  const auto = td.call("records.settled").then(() => performance.now() - started);
  report("during an automatic index build", await writes(auto), await auto);

  // Declared: a settings change names a field. The writes start with it: a build on the
  // server's event loop (tenantd before schema 17) would hold them up right there.
  started = performance.now();
  const declared = td
    .call("apps.settings", { appId: appA.id, settings: { collections: { items: { indexed: ["n"] } } } })
    .then(() => td.call("records.settled"))
    .then(() => performance.now() - started);
  report("during a declared index build", await writes(declared), await declared);
  console.log(JSON.stringify({ rows, connections, results: rowsOut }));
} finally {
  await td.stop();
}
