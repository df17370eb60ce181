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
 * given, reads the CPU time of a database server the side depends on (PostgreSQL).
 * CPU per request is summed over the children; RSS and loop figures are the largest of them.
 */
export async function measureSide({ scenario, children, side, connections, warmup, duration, serverCpuMs }) {
  const nodes = Array.isArray(children) ? children : [children];
  const urls = nodes.length === 1 ? nodes[0].url : nodes.map((c) => c.url);
  const base = { url: urls, connections };
  const run = (warm) =>
    scenario.amount
      ? { ...base, amount: warm ? scenario.warmupAmount ?? connections : scenario.amount }
      : { ...base, duration: warm ? warmup : scenario.duration ?? duration };
  // RSS growth counts from before the warm-up: the first large bodies are what grows it.
  const before = await Promise.all(nodes.map((c) => c.call("stats.reset")));
  if (warmup > 0) await load({ ...run(true), requests: await side.requests() });
  await settle();
  await Promise.all(nodes.map((c) => c.call("loop.reset")));
  const dbBefore = serverCpuMs?.();
  const figures = await load({ ...run(false), requests: await side.requests() });
  const dbAfter = serverCpuMs?.();
  const stats = await Promise.all(nodes.map((c, i) => c.call("stats", { profileName: `${scenario.name}-${c.label}${nodes.length > 1 ? `-${i + 1}` : ""}` })));
  const sum = (k) => stats.reduce((n, s) => n + s[k], 0);
  const max = (k) => Math.max(...stats.map((s) => s[k]));
  const perRequest = (ms) => (figures.requests && ms !== undefined ? (ms * 1000) / figures.requests : undefined);
  return {
    ...figures,
    // Server CPU per request: steadier than req/s on a busy machine, where the client and other work take the cores.
    cpuUsPerRequest: perRequest(sum("cpuMs")),
    cpuSystemUsPerRequest: perRequest(sum("cpuSystemMs")),
    ...(serverCpuMs ? { dbCpuUsPerRequest: perRequest(dbBefore !== undefined && dbAfter !== undefined ? dbAfter - dbBefore : undefined) } : {}),
    ...(nodes.length > 1 ? { nodes: nodes.length, cpuUsPerRequestByNode: stats.map((s) => perRequest(s.cpuMs)) } : {}),
    rssMb: max("rssMb"),
    peakRssMb: max("peakRssMb"),
    rssGrowthMb: Math.max(...stats.map((s, i) => s.peakRssMb - before[i].rssMb)),
    loopP99Ms: max("loopP99Ms"),
  };
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
