// `npm run bench`: starts tenantd and the raw baseline as child processes, loads each with
// autocannon from this process, prints a table and writes bench/results/<time>.json and
// latest.json. Flags: --only a,b  --duration <s>  --connections <n>  --warmup <s>
// --profile (CPU profiles of both children into bench/results/profiles, named by pid)
// --no-write (print only)  --list.
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { startChild } from "./children.mjs";
import { load, loadTogether } from "./load.mjs";
import { createFixtures } from "./fixtures.mjs";
import { Skip, call } from "./http.mjs";
import { SCENARIOS } from "./scenarios.mjs";
import { measureArgon2Bound } from "./argon2-bound.mjs";
import { machine, markdownTable, writeResults, judge } from "./report.mjs";

const { values: opts } = parseArgs({
  options: {
    only: { type: "string" },
    duration: { type: "string", default: "4" },
    connections: { type: "string", default: "10" },
    warmup: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    list: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
  },
});
if (opts.list) {
  for (const s of SCENARIOS) console.log(`${s.name.padEnd(26)} ${s.title}`);
  process.exit(0);
}
const duration = Number(opts.duration);
const connections = Number(opts.connections);
const warmup = Number(opts.warmup);
const only = opts.only?.split(",").map((s) => s.trim()).filter(Boolean);
const unknown = only?.filter((n) => !SCENARIOS.some((s) => s.name === n)) ?? [];
if (unknown.length) {
  console.error(`unknown scenario(s): ${unknown.join(", ")}. Known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
  process.exit(2);
}
const selected = SCENARIOS.filter((s) => !only || only.includes(s.name));
const resultsDir = fileURLToPath(new URL("./results", import.meta.url));

const startedAt = new Date().toISOString();
const profileArgs = opts.profile ? ["--cpu-prof", `--cpu-prof-dir=${resultsDir}/profiles`] : [];
const [td, raw] = await Promise.all([startChild("./tenantd-server.mjs", { execArgv: profileArgs }), startChild("./raw-server.mjs", { execArgv: profileArgs })]);
const stopAll = () => Promise.all([td.stop(), raw.stop()]);
process.once("SIGINT", () => stopAll().finally(() => process.exit(130)));

const f = createFixtures(td, raw);
const result = {
  startedAt,
  machine: machine(),
  settings: { duration, connections, warmup, argon2: "OWASP default (m=19456 KiB, t=2, p=1)", rateLimit: false },
  idle: {},
  argon2: undefined,
  scenarios: [],
  explain: {},
};

try {
  await settle();
  result.idle = { tenantdRssMb: (await td.call("stats")).rssMb, rawRssMb: (await raw.call("stats")).rssMb };
  console.log(`tenantd ${td.url} (pid ${td.pid}), raw ${raw.url} (pid ${raw.pid}); idle RSS tenantd ${result.idle.tenantdRssMb.toFixed(0)} MB, raw ${result.idle.rawRssMb.toFixed(0)} MB`);
  const needsBound = selected.some((s) => s.custom === "argon2" || s.target?.kind === "argon2");
  for (const scenario of selected) {
    if (scenario.custom === "argon2" || (needsBound && !result.argon2 && scenario.target?.kind === "argon2")) {
      await settle();
      result.argon2 = await measureArgon2Bound();
      console.log(`argon2 bound: ${result.argon2.hashesPerSecond.toFixed(0)} hashes/s (8 in flight, m=${result.argon2.params.memoryCost} t=${result.argon2.params.timeCost} p=${result.argon2.params.parallelism})`);
      if (scenario.custom === "argon2") {
        result.scenarios.push({ name: scenario.name, title: scenario.title, tenantd: { rps: result.argon2.hashesPerSecond } });
        continue;
      }
    }
    const row = await runScenario(scenario);
    result.scenarios.push(row);
    printRow(row);
  }
} finally {
  await stopAll();
}

console.log(`\nmachine: ${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memoryGb} GB, Node ${result.machine.node}`);
console.log(`each scenario: ${warmup} s warm-up then ${duration} s (uploads: fixed request counts), ${connections} connections unless noted\n`);
console.log(markdownTable(result.scenarios, result.argon2?.hashesPerSecond));
for (const [name, plans] of Object.entries(result.explain)) {
  console.log(`\nEXPLAIN QUERY PLAN, ${name}:`);
  for (const p of plans.tenantd ?? []) console.log(`  tenantd: ${p.sql.replace(/\s+/g, " ")}\n    ${p.plan.join("\n    ")}`);
  if (plans.raw) console.log(`  raw: ${plans.raw.join("; ")}`);
}
if (!opts["no-write"]) console.log(`\nwrote ${writeResults(resultsDir, result)} and latest.json`);

/** Lets the servers finish any background work (WAL checkpoint, GC) before the next figure. */
async function settle() {
  await new Promise((r) => setTimeout(r, 300));
}

async function runScenario(scenario) {
  const row = { name: scenario.name, title: scenario.title, target: scenario.target };
  const conns = scenario.connections ?? connections;
  try {
    if (scenario.custom === "storm") return await runStorm(scenario, row);
    // Setup of both sides first: a tenantd endpoint that is missing skips the whole row.
    const sides = { tenantd: await scenario.tenantd(f, { connections: conns }), raw: await scenario.raw(f, { connections: conns }) };
    for (const [name, child] of [["tenantd", td], ["raw", raw]]) {
      const side = sides[name];
      const base = { url: child.url, connections: conns };
      const run = (warm) =>
        scenario.amount
          ? { ...base, amount: warm ? scenario.warmupAmount ?? conns : scenario.amount }
          : { ...base, duration: warm ? warmup : scenario.duration ?? duration };
      // RSS growth counts from before the warm-up: the first large bodies are what grows it.
      const before = await child.call("stats.reset");
      if (warmup > 0) await load({ ...run(true), requests: await side.requests() });
      await settle();
      await child.call("loop.reset");
      const figures = await load({ ...run(false), requests: await side.requests() });
      const stats = await child.call("stats");
      row[name] = {
        ...figures,
        // Server CPU per request: steadier than req/s on a busy machine, where the client and other work take the cores.
        cpuUsPerRequest: figures.requests ? (stats.cpuMs * 1000) / figures.requests : undefined,
        cpuSystemUsPerRequest: figures.requests ? (stats.cpuSystemMs * 1000) / figures.requests : undefined,
        rssMb: stats.rssMb,
        peakRssMb: stats.peakRssMb,
        rssGrowthMb: stats.peakRssMb - before.rssMb,
        loopP99Ms: stats.loopP99Ms,
      };
    }
    row.ratio = row.tenantd.rps / row.raw.rps;
    if (scenario.explain) {
      const plans = (result.explain[scenario.name] = await explain(scenario.explain));
      const lines = plans.tenantd.flatMap((p) => p.plan);
      row.planUsesFieldIndex = lines.length > 0 && lines.every((l) => !/^SCAN\b/.test(l)) && lines.some((l) => /USING (COVERING )?INDEX .*<expr>=\?/.test(l));
    }
  } catch (e) {
    if (e instanceof Skip) row.skipped = e.message;
    else row.failed = e instanceof Error ? e.message : String(e);
  }
  return row;
}

/** 64 logins at once and a cheap GET on 2 more connections: how late does the event loop run? */
async function runStorm(scenario, row) {
  for (const [name, child] of [["tenantd", td], ["raw", raw]]) {
    const { login, me } = scenario.storm[name];
    await settle();
    const before = await child.call("stats.reset");
    const [logins, probe] = await loadTogether(
      { url: child.url, connections: 64, duration, requests: await login(f) },
      { url: child.url, connections: 2, duration, requests: await me(f) },
    );
    const stats = await child.call("stats");
    row[name] = { ...probe, loginRps: logins.rps, loginP99: logins.p99, loginErrors: logins.errors + logins.non2xx, rssMb: stats.rssMb, peakRssMb: stats.peakRssMb, rssGrowthMb: stats.peakRssMb - before.rssMb, loopP99Ms: stats.loopP99Ms, loopMaxMs: stats.loopMaxMs };
  }
  row.ratio = row.tenantd.rps / row.raw.rps;
  return row;
}

/** The plan of the SQL tenantd ran for one indexed-list request, and the raw server's. */
async function explain({ collection, filter }) {
  const { tenant } = await f.td.big();
  const rawTenant = (await f.raw.big()).tenant;
  await td.call("trace.start");
  await call(td.url, "GET", `/api/v1/data/${collection}?filter=${encodeURIComponent(JSON.stringify(filter))}&limit=20`, { bearer: tenant.bearer });
  const tenantd = await td.call("trace.stop", {});
  const [[field, value]] = Object.entries(filter);
  return { tenantd: tenantd.filter((s) => s.sql.includes("json") || /\b(record|data)/i.test(s.sql)), raw: await raw.call("explain", { tenantId: rawTenant.id, collection, field, value }) };
}

function printRow(row) {
  if (row.skipped) return console.log(`${row.name}: ${row.skipped}`);
  if (row.failed) return console.log(`${row.name}: FAILED ${row.failed}`);
  const side = (s) =>
    `${s.rps.toFixed(0)} req/s p50 ${s.p50} p99 ${s.p99} ms, loop p99 ${s.loopP99Ms.toFixed(1)} ms` +
    (s.cpuUsPerRequest !== undefined ? `, ${s.cpuUsPerRequest.toFixed(0)} µs CPU/req (${s.cpuSystemUsPerRequest.toFixed(0)} system)` : "") +
    (s.loginRps !== undefined ? `, logins ${s.loginRps.toFixed(0)}/s` : "") +
    (s.non2xx || s.errors ? ` (${s.non2xx} non-2xx, ${s.errors} errors)` : "");
  const verdict = judge(row, result.argon2?.hashesPerSecond);
  console.log(`${row.name}: tenantd ${side(row.tenantd)} | raw ${side(row.raw)} | ×${row.ratio.toFixed(2)}${verdict ? ` | ${row.target.text}: ${verdict.figure} ${verdict.met ? "met" : "MISSED"}` : ""}`);
}
