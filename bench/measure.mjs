// One measured load against one server side (a tenantd child, the raw child, or several
// tenantd nodes behind one round-robin client): RSS before, warm-up, settle, reset the
// event-loop histogram and CPU counters, the measured load, the figures after.
import { load, loadTogether } from "./load.mjs";

/** Lets the servers finish any background work (WAL checkpoint, GC) before the next figure. */
export async function settle() {
  await new Promise((r) => setTimeout(r, 300));
}

/**
 * `children`: one child, or the nodes that share the load (autocannon spreads connections
 * over their URLs round-robin). `side.requests()` makes the request list. `serverCpuMs`, when
 * given, reads the CPU time of a database server the side depends on (PostgreSQL);
 * `beforeRound`, when given, runs before each measured round's settle pause.
 * CPU per request is summed over the children; RSS and loop figures are the largest of them.
 */
export async function measureSide(opts) {
  const warm = await warmSide(opts);
  return combineRounds(warm, [await measureRound(opts, "")]);
}

/**
 * Several sides of one scenario (tenantd and the raw baseline), each warmed up once, then
 * measured in `rounds` loads that take turns (A B, B A, A B…): a neighbour that slows the
 * machine for a few seconds lands on both sides instead of on one side's only load. Each
 * side's figures are over all its rounds; `roundRps` keeps each round's rate, in order.
 */
export async function measureInterleaved({ sides, rounds, ...common }) {
  const warm = [];
  for (const s of sides) warm.push(await warmSide({ ...common, ...s }));
  const measured = sides.map(() => []);
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? sides.map((_, i) => i) : sides.map((_, i) => sides.length - 1 - i);
    for (const i of order) measured[i].push(await measureRound({ ...common, ...sides[i] }, rounds > 1 ? `-r${r + 1}` : ""));
  }
  return sides.map((_, i) => combineRounds(warm[i], measured[i]));
}

const nodesOf = (children) => (Array.isArray(children) ? children : [children]);

function loadOptions({ scenario, children, connections, warmup, duration }, warm) {
  const nodes = nodesOf(children);
  const base = { url: nodes.length === 1 ? nodes[0].url : nodes.map((c) => c.url), connections };
  return scenario.amount
    ? { ...base, amount: warm ? scenario.warmupAmount ?? connections : scenario.amount }
    : { ...base, duration: warm ? warmup : scenario.duration ?? duration };
}

/** RSS before, then the warm-up. RSS growth counts from here: the first large bodies are what grows it. */
async function warmSide(opts) {
  const nodes = nodesOf(opts.children);
  const before = await Promise.all(nodes.map((c) => c.call("stats.reset")));
  if (opts.warmup > 0) await load({ ...loadOptions(opts, true), requests: await opts.side.requests() });
  return { nodes, before };
}

/** One measured load: settle, reset the loop histogram and CPU counters, load, read the figures. */
async function measureRound(opts, suffix) {
  const { scenario, children, side, serverCpuMs, beforeRound } = opts;
  const nodes = nodesOf(children);
  // On PostgreSQL (postgres-side.mjs): the last round's queries finish and its dirty pages
  // are written out before this round, not during it.
  await beforeRound?.();
  await settle();
  await Promise.all(nodes.map((c) => c.call("loop.reset")));
  const dbBefore = serverCpuMs?.();
  const figures = await load({ ...loadOptions(opts, false), requests: await side.requests() });
  const dbAfter = serverCpuMs?.();
  const stats = await Promise.all(nodes.map((c, i) => c.call("stats", { profileName: `${scenario.name}-${c.label}${nodes.length > 1 ? `-${i + 1}` : ""}${suffix}` })));
  const dbCpuMs = dbBefore !== undefined && dbAfter !== undefined ? dbAfter - dbBefore : undefined;
  return { figures, stats, dbCpuMs, measuresDb: Boolean(serverCpuMs) };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * One side's figures over its rounds: rate and CPU per request from the sums, p50 the median
 * of the rounds' p50s, p99 and the loop and RSS figures the worst round's.
 */
function combineRounds({ nodes, before }, rounds) {
  const all = rounds.flatMap((r) => r.stats);
  const requests = rounds.reduce((n, r) => n + r.figures.requests, 0);
  const seconds = rounds.reduce((n, r) => n + (r.figures.rps ? r.figures.requests / r.figures.rps : r.figures.seconds), 0);
  const sumOver = (k) => all.reduce((n, s) => n + s[k], 0);
  const max = (k) => Math.max(...all.map((s) => s[k]));
  const perRequest = (ms) => (requests && ms !== undefined ? (ms * 1000) / requests : undefined);
  const dbMs = rounds.some((r) => r.dbCpuMs === undefined) ? undefined : rounds.reduce((n, r) => n + r.dbCpuMs, 0);
  const figures = rounds.map((r) => r.figures);
  return {
    ...figures[figures.length - 1],
    rps: requests ? requests / seconds : 0,
    p50: median(figures.map((f) => f.p50)),
    p99: Math.max(...figures.map((f) => f.p99)),
    mean: figures.reduce((n, f) => n + f.mean * f.requests, 0) / (requests || 1),
    requests,
    non2xx: figures.reduce((n, f) => n + f.non2xx, 0),
    errors: figures.reduce((n, f) => n + f.errors, 0),
    seconds: Math.round(figures.reduce((n, f) => n + f.seconds, 0) * 10) / 10,
    ...(rounds.length > 1 ? { roundRps: figures.map((f) => f.rps) } : {}),
    // Server CPU per request: steadier than req/s on a busy machine, where the client and other work take the cores.
    cpuUsPerRequest: perRequest(sumOver("cpuMs")),
    cpuSystemUsPerRequest: perRequest(sumOver("cpuSystemMs")),
    // Garbage collection's share of that CPU, and the young generation's size at the end.
    gcUsPerRequest: perRequest(all.reduce((n, s) => n + s.gc.youngMs + s.gc.fullMs, 0)),
    scavengesPer1kRequests: requests ? (all.reduce((n, s) => n + s.gc.youngCount, 0) * 1000) / requests : undefined,
    newSpaceMb: Math.max(...all.map((s) => s.gc.newSpaceMb)),
    ...(rounds[0].measuresDb ? { dbCpuUsPerRequest: perRequest(dbMs) } : {}),
    ...(nodes.length > 1 ? { nodes: nodes.length, cpuUsPerRequestByNode: nodes.map((_, i) => perRequest(rounds.reduce((n, r) => n + r.stats[i].cpuMs, 0))) } : {}),
    rssMb: max("rssMb"),
    peakRssMb: max("peakRssMb"),
    rssGrowthMb: Math.max(...nodes.map((_, i) => Math.max(...rounds.map((r) => r.stats[i].peakRssMb)) - before[i].rssMb)),
    loopP99Ms: max("loopP99Ms"),
  };
}

/**
 * Each round's rate of side A over side B's in the same round, and their median. `perA`:
 * requests of A that make one operation (a passkey sign-in is two), so operations are compared.
 */
export function pairedRatio(a, b, perA = 1) {
  if (!a.roundRps || !b.roundRps) return { ratio: a.rps / perA / b.rps };
  const roundRatios = a.roundRps.map((rps, i) => rps / perA / b.roundRps[i]);
  return { ratio: median(roundRatios), roundRatios };
}

/** 64 logins at once and a cheap GET on 2 more connections against one server: how late does its event loop run? */
export async function measureStorm({ child, login, me, f, duration }) {
  await settle();
  const before = await child.call("stats.reset");
  const [logins, probe] = await loadTogether(
    { url: child.url, connections: 64, duration, requests: await login(f) },
    { url: child.url, connections: 2, duration, requests: await me(f) },
  );
  const stats = await child.call("stats");
  return { ...probe, loginRps: logins.rps, loginP99: logins.p99, loginErrors: logins.errors + logins.non2xx, rssMb: stats.rssMb, peakRssMb: stats.peakRssMb, rssGrowthMb: stats.peakRssMb - before.rssMb, loopP99Ms: stats.loopP99Ms, loopMaxMs: stats.loopMaxMs };
}
