// `npm run bench`: starts tenantd and the raw baseline as child processes, loads each with
// autocannon from this process, prints a table and writes bench/results/<time>.json and
// latest.json. Flags: --only a,b  --duration <s> (one measured round)  --rounds <n> (rounds
// per side, tenantd and raw taking turns; measure.mjs)  --connections <n>  --warmup <s>
// --profile (a CPU profile of each measured load, per scenario and server, into
// bench/results/profiles/<scenario>-<server>.cpuprofile)
// --no-write (print only)  --list  --engines sqlite,postgres (tenantd on which stores; with
// postgres, tenantd-pg and the raw PostgreSQL baseline take turns: postgres-side.mjs)
// --peers parse (Parse Server on the same PostgreSQL takes turns with them in its rows:
// parse-peer.mjs; needs --engines postgres and `npm ci --prefix bench/peers/parse`)  --nodes 1,2,3 (tenantd nodes on one PostgreSQL; multinode.mjs).
import { parseArgs } from "node:util";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { startChild } from "./children.mjs";
import { measureInterleaved, measureStorm, pairedRatio, settle } from "./measure.mjs";
import { startPostgresEngine } from "./postgres-engine.mjs";
import { runPostgresScenario } from "./postgres-side.mjs";
import { runNodes, nodesTable } from "./multinode.mjs";
import { createFixtures } from "./fixtures.mjs";
import { Skip, call } from "./http.mjs";
import { SCENARIOS } from "./scenarios.mjs";
import { measureArgon2Bound } from "./argon2-bound.mjs";
import { machine, markdownTable, writeResults, judge, judgePg, judgeParse, judgeRelative, PG_TARGET } from "./report.mjs";
import { PARSE_MISSING, PARSE_ROWS, createParseFixtures, parseInstalled, parseVersion } from "./parse-peer.mjs";

const { values: opts } = parseArgs({
  options: {
    only: { type: "string" },
    duration: { type: "string", default: "2" },
    rounds: { type: "string", default: "7" },
    connections: { type: "string", default: "10" },
    warmup: { type: "string", default: "1" },
    profile: { type: "boolean", default: false },
    list: { type: "boolean", default: false },
    "no-write": { type: "boolean", default: false },
    engines: { type: "string", default: "sqlite,postgres" },
    nodes: { type: "string" },
    peers: { type: "string", default: "" },
  },
});
if (opts.list) {
  for (const s of SCENARIOS) console.log(`${s.name.padEnd(26)} ${s.title}`);
  process.exit(0);
}
const duration = Number(opts.duration);
const rounds = Number(opts.rounds);
// Loads that are not taken in turns (the login storm, the node table)
// last as long as one side's rounds together.
const singleLoad = duration * rounds;
const connections = Number(opts.connections);
const warmup = Number(opts.warmup);
const only = opts.only?.split(",").map((s) => s.trim()).filter(Boolean);
const unknown = only?.filter((n) => !SCENARIOS.some((s) => s.name === n)) ?? [];
if (unknown.length) {
  console.error(`unknown scenario(s): ${unknown.join(", ")}. Known: ${SCENARIOS.map((s) => s.name).join(", ")}`);
  process.exit(2);
}
const selected = SCENARIOS.filter((s) => !only || only.includes(s.name));
const engines = opts.engines.split(",").map((s) => s.trim()).filter(Boolean);
const nodeCounts = opts.nodes ? opts.nodes.split(",").map(Number) : [];
if (!Number.isInteger(rounds) || rounds < 1 || !(duration > 0)) {
  console.error(`--rounds takes a whole number of rounds, 1 or more (got ${opts.rounds}); --duration takes seconds above 0 (got ${opts.duration})`);
  process.exit(2);
}
if (engines.some((e) => e !== "sqlite" && e !== "postgres") || nodeCounts.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error(`--engines takes sqlite and/or postgres (got ${opts.engines}); --nodes takes node counts such as 1,2,3 (got ${opts.nodes})`);
  process.exit(2);
}
const peers = opts.peers.split(",").map((s) => s.trim()).filter(Boolean);
if (peers.some((p) => p !== "parse")) {
  console.error(`--peers takes parse (got ${opts.peers})`);
  process.exit(2);
}
const onSqlite = engines.includes("sqlite");
// The PostgreSQL column needs `--engines postgres`; the node table (--nodes) starts PostgreSQL either way.
const pgColumn = engines.includes("postgres");
const onPostgres = pgColumn || nodeCounts.length > 0;
let withParse = peers.includes("parse") && selected.some((s) => PARSE_ROWS.has(s.name));
if (withParse && !pgColumn) {
  console.log("--peers parse: Parse runs on the bench's PostgreSQL, beside tenantd-pg; without --engines postgres it is skipped");
  withParse = false;
} else if (withParse && !parseInstalled()) {
  console.log(PARSE_MISSING);
  withParse = false;
}
const resultsDir = fileURLToPath(new URL("./results", import.meta.url));

const startedAt = new Date().toISOString();
const profileEnv = opts.profile ? { TENANTD_BENCH_PROFILE_DIR: `${resultsDir}/profiles` } : undefined;
const [td, raw] = await Promise.all([onSqlite ? startChild("./tenantd-server.mjs", { env: profileEnv }) : undefined, startChild("./raw-server.mjs", { env: profileEnv })]);
// The control rows' second baseline (scenarios.mjs, `control`), idle otherwise.
const rawB = selected.some((s) => s.control) ? await startChild("./raw-server.mjs") : undefined;
const pg = onPostgres ? await startPostgresEngine({ env: profileEnv, raw: pgColumn, parse: withParse }).catch(async (e) => { await Promise.all([td?.stop(), raw.stop(), rawB?.stop()]); throw e; }) : undefined;
const stopAll = () => Promise.all([td?.stop(), raw.stop(), rawB?.stop(), pg?.stop()]);
process.once("SIGINT", () => stopAll().finally(() => process.exit(130)));

const f = td && createFixtures(td, raw);
// Fixtures made through the PostgreSQL node's API, and on the raw PostgreSQL baseline.
const fpg = pg && createFixtures(pg.node, pg.raw ?? raw, pg.raw ? { side: "tenantd-pg", rawSide: "raw-pg" } : { side: "tenantd-pg" });
// Without the PostgreSQL column (the node table alone) the seeding meanwhile goes to the raw
// SQLite baseline: shared with its own fixtures, so it is seeded once.
if (f && fpg && !pg.raw) fpg.raw = f.raw;
const fParse = pg?.parse && createParseFixtures(pg.parse);
// The raw SQLite baseline's (only its raw side is used without tenantd on SQLite).
const fRaw = f ?? (pg && createFixtures(pg.node, raw));
const fRawB = rawB && createFixtures(td ?? pg.node, rawB);
const result = {
  startedAt,
  machine: machine(),
  settings: { duration, rounds, connections, warmup, argon2: "OWASP default (m=19456 KiB, t=2, p=1)", rateLimit: false, engines, nodes: nodeCounts, peers: withParse ? ["parse"] : [] },
  ...(pg ? { postgres: { ...pg.server.info, pool: 10, ...(pg.parse ? { parse: parseVersion() } : {}) } } : {}),
  idle: {},
  argon2: undefined,
  scenarios: [],
  explain: {},
};

try {
  await settle();
  result.idle = { tenantdRssMb: td && (await td.call("stats")).rssMb, rawRssMb: (await raw.call("stats")).rssMb, ...(pg ? { tenantdPostgresRssMb: (await pg.node.call("stats")).rssMb } : {}), ...(pg?.raw ? { rawPostgresRssMb: (await pg.raw.call("stats")).rssMb } : {}) };
  if (td) console.log(`tenantd ${td.url} (pid ${td.pid}), raw ${raw.url} (pid ${raw.pid}); idle RSS tenantd ${result.idle.tenantdRssMb.toFixed(0)} MB, raw ${result.idle.rawRssMb.toFixed(0)} MB`);
  if (pg) console.log(`tenantd on PostgreSQL ${pg.server.info.version} (default settings, started in ${(pg.server.info.startMs / 1000).toFixed(1)} s): ${pg.node.url} (pid ${pg.node.pid}); idle RSS ${result.idle.tenantdPostgresRssMb.toFixed(0)} MB${pg.raw ? `; raw-pg ${pg.raw.url} (pid ${pg.raw.pid}), idle RSS ${result.idle.rawPostgresRssMb.toFixed(0)} MB` : ""}${pg.parse ? `; Parse Server ${result.postgres.parse} ${pg.parse.url} (pid ${pg.parse.pid})` : ""}`);
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
    relate(row);
    result.scenarios.push(row);
    printRow(row);
  }
  if (nodeCounts.length) {
    await settle();
    result.nodes = await runNodes({ pg, f: fpg, counts: nodeCounts, only, connections, warmup, duration: singleLoad });
  }
} finally {
  await stopAll();
}

console.log(`\nmachine: ${result.machine.cpus} × ${result.machine.cpuModel}, ${result.machine.memoryGb} GB, Node ${result.machine.node}`);
console.log(`each scenario: ${warmup} s warm-up per side, then ${rounds} rounds of ${duration} s, tenantd and raw taking turns${pgColumn ? ", then tenantd-pg and raw-pg the same way" : ""} (uploads: fixed request counts; login storm: one ${singleLoad} s load per side), ${connections} connections unless noted\n`);
console.log(markdownTable(result.scenarios, result.argon2?.hashesPerSecond));
if (result.nodes) console.log(`\n${nodesTable(result.nodes)}`);
for (const [name, plans] of Object.entries(result.explain)) {
  console.log(`\nEXPLAIN QUERY PLAN, ${name}:`);
  for (const p of plans.tenantd ?? []) console.log(`  tenantd: ${p.sql.replace(/\s+/g, " ")}\n    ${p.plan.join("\n    ")}`);
  if (plans.raw) console.log(`  raw: ${plans.raw.join("; ")}`);
}
for (const row of result.scenarios.filter((r) => r.postgres?.plan)) {
  console.log(`\nEXPLAIN (PostgreSQL), ${row.name}, the page query:\n  tenantd-pg:\n    ${row.postgres.plan.join("\n    ")}`);
  if (row.postgres.rawPgPlan) console.log(`  raw-pg:\n    ${row.postgres.rawPgPlan.join("\n    ")}`);
}
if (!opts["no-write"]) console.log(`\nwrote ${writeResults(resultsDir, result)} and latest.json`);

async function runScenario(scenario) {
  // The machine may be shared: each row says how busy it was when the row started.
  const row = { name: scenario.name, title: scenario.title, target: scenario.target, loadAverage: Math.round(loadavg()[0] * 10) / 10 };
  if (scenario.baselineOnTenantd) row.baselineOnTenantd = true;
  const conns = scenario.connections ?? connections;
  try {
    if (scenario.custom === "storm") await runStorm(scenario, row);
    else if (scenario.control) await runControl(scenario, row, conns);
    // `baselineOnTenantd`: the baseline is another request of tenantd itself (scenarios.mjs),
    // so without tenantd on SQLite the row has only its PostgreSQL pair.
    else if (!scenario.baselineOnTenantd || td) {
      // Setup of both sides first: a tenantd endpoint that is missing skips the whole row.
      const onTenantd = Boolean(scenario.baselineOnTenantd);
      const sides = { tenantd: td && (await scenario.tenantd(f, { connections: conns })), raw: await scenario.raw(onTenantd ? f : fRaw, { connections: conns }) };
      // The raw side's setup (a million rows seeded on a busy machine) may outlast tenantd's
      // access tokens: asked again, the fixtures refresh tokens older than 5 minutes.
      if (td) sides.tenantd = await scenario.tenantd(f, { connections: conns });
      const names = td ? ["tenantd", "raw"] : ["raw"];
      const children = { tenantd: td, raw: onTenantd ? td : raw };
      // Uploads send fixed request counts and measure RSS growth: one load each, not rounds.
      const measured = await measureInterleaved({
        scenario,
        sides: names.map((name) => ({ children: children[name], side: sides[name] })),
        rounds: scenario.amount ? 1 : rounds,
        connections: conns,
        warmup,
        duration,
      });
      names.forEach((name, i) => (row[name] = measured[i]));
      for (const name of names) refuseErrors(name, row[name]);
      if (row.tenantd) Object.assign(row, pairedRatio(row.tenantd, row.raw, scenario.requestsPerOperation));
      if (scenario.explain && td) {
        const plans = (result.explain[scenario.name] = await explain(scenario.explain));
        const lines = plans.tenantd.flatMap((p) => p.plan);
        row.planUsesFieldIndex = lines.length > 0 && lines.every((l) => !/^SCAN\b/.test(l)) && lines.some((l) => /USING (COVERING )?INDEX .*(<expr>|value)=\?/.test(l));
      }
    }
  } catch (e) {
    if (e instanceof Skip) row.skipped = e.message;
    else row.failed = e instanceof Error ? e.message : String(e);
  }
  // tenantd on PostgreSQL and the raw PostgreSQL baseline, after the SQLite pair of the same scenario.
  if (pg && pgColumn && !row.skipped && !scenario.control) row.postgres = await runPostgresScenario({ scenario, pg, f: fpg, pf: fParse, connections: conns, warmup, duration, rounds, rawSqlite: row.raw });
  return row;
}

/** A `relative` target: the row against the row it names, on each engine measured (report.mjs judgeRelative). */
function relate(row) {
  const t = row.target;
  if (t?.kind !== "relative") return;
  const ref = result.scenarios.find((r) => r.name === t.of);
  row.relative = judgeRelative(t, row.tenantd, ref?.tenantd);
  if (row.postgres && !row.postgres.failed && !row.postgres.skipped) row.postgres.relative = judgeRelative(t, row.postgres, ref?.postgres);
}

/** A control row: the scenario `control` names on the second baseline (B) against the first. */
async function runControl(scenario, row, conns) {
  const base = SCENARIOS.find((s) => s.name === scenario.control);
  const sides = [
    { children: rawB, side: await base.raw(fRawB, { connections: conns }) },
    { children: raw, side: await base.raw(fRaw, { connections: conns }) },
  ];
  [row.rawB, row.raw] = await measureInterleaved({ scenario, sides, rounds, connections: conns, warmup, duration });
  refuseErrors("raw B", row.rawB);
  refuseErrors("raw", row.raw);
  Object.assign(row, pairedRatio(row.rawB, row.raw));
}

/** A load that was answered with errors measured the errors, not the scenario. */
function refuseErrors(name, { non2xx, errors }) {
  if (non2xx || errors) throw new Error(`${name}: ${non2xx} non-2xx answers and ${errors} errors during the load`);
}

/** 64 logins at once and a cheap GET on 2 more connections: how late does the event loop run? */
async function runStorm(scenario, row) {
  for (const [name, child] of [["tenantd", td], ["raw", raw]]) {
    if (!child) continue;
    const { login, me } = scenario.storm[name];
    row[name] = await measureStorm({ child, login, me, f: name === "tenantd" ? f : fRaw, duration: singleLoad });
  }
  if (row.tenantd) row.ratio = row.tenantd.rps / row.raw.rps;
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
  printSqliteRow(row);
  const p = row.postgres;
  if (!p) return;
  if (p.skipped || p.failed) return console.log(`${row.name} on PostgreSQL: ${p.skipped ?? `FAILED ${p.failed}`}`);
  const db = (s) => (s.dbCpuUsPerRequest !== undefined ? ` + PostgreSQL ${s.dbCpuUsPerRequest.toFixed(0)} µs CPU/req` : "");
  const rawPg = p.rawPg ? ` | raw-pg ${side(p.rawPg)}${db(p.rawPg)} | ×${p.rawPgRatio.toFixed(2)} raw-pg` : "";
  const verdict = judgePg(row);
  const parse = p.parseFailed ? ` | ${p.parseFailed}` : p.parse ? ` | parse ${side(p.parse)}${db(p.parse)}${p.parseRatio !== undefined ? ` | ×${p.parseRatio.toFixed(2)} parse` : ""}` : "";
  const parseVerdict = judgeParse(row);
  console.log(
    `${row.name} on PostgreSQL (load ${row.loadAverage}): tenantd ${side(p)}${db(p)}${rawPg}${parse}${p.ratio !== undefined ? ` | ×${p.ratio.toFixed(2)} raw (SQLite)` : ""}` +
      `${verdict ? ` | ${row.baselineOnTenantd ? row.target.text : PG_TARGET.text}: ${verdict.figure} ${verdict.met ? "met" : "MISSED"}` : ""}` +
      `${parseVerdict ? ` | ${p.parseTarget.text}: ${parseVerdict.figure} ${parseVerdict.met ? "met" : "MISSED"}` : ""}${p.plan ? ` | field index ${p.planUsesFieldIndex ? "used" : "NOT used"}` : ""}` +
      `${p.relative ? ` | ${row.target.text}: ${p.relative.figure} ${p.relative.met ? "met" : "MISSED"}` : ""}` +
      `${row.target?.pgMaxMs !== undefined ? ` | p50 ≤ ${row.target.pgMaxMs} ms: ${p.p50} ms ${p.p50 <= row.target.pgMaxMs ? "met" : "MISSED"}` : ""}`,
  );
}

function side(s) {
  return (
    `${s.rps.toFixed(0)} req/s p50 ${s.p50} p99 ${s.p99} ms, loop p99 ${s.loopP99Ms.toFixed(1)} ms` +
    (s.cpuUsPerRequest !== undefined ? `, ${s.cpuUsPerRequest.toFixed(0)} µs CPU/req (${s.cpuSystemUsPerRequest.toFixed(0)} system)` : "") +
    (s.gcUsPerRequest !== undefined ? `, GC ${s.gcUsPerRequest.toFixed(1)} µs/req (${s.scavengesPer1kRequests.toFixed(1)} scavenges per 1k, young gen ${s.newSpaceMb.toFixed(0)} MB)` : "") +
    (s.loginRps !== undefined ? `, logins ${s.loginRps.toFixed(0)}/s` : "") +
    (s.non2xx || s.errors ? ` (${s.non2xx} non-2xx, ${s.errors} errors)` : "")
  );
}

function printSqliteRow(row) {
  if (row.skipped) return console.log(`${row.name}: ${row.skipped}`);
  if (row.failed) return console.log(`${row.name}: FAILED ${row.failed}`);
  if (row.rawB) return console.log(`${row.name}: raw B ${side(row.rawB)} | raw ${side(row.raw)} | ×${row.ratio.toFixed(2)} (identical servers)`);
  if (!row.tenantd && !row.raw) return console.log(`${row.name}: no SQLite pair (its baseline is tenantd on SQLite, not started)`);
  if (!row.tenantd) return console.log(`${row.name}: raw ${side(row.raw)}`);
  const verdict = judge(row, result.argon2?.hashesPerSecond);
  console.log(`${row.name}: tenantd ${side(row.tenantd)} | raw ${side(row.raw)} | ×${row.ratio.toFixed(2)}${verdict ? ` | ${row.target.text}: ${verdict.figure} ${verdict.met ? "met" : "MISSED"}` : ""}`);
}
