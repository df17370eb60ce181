// Several tenantd nodes on one PostgreSQL (issue 19): the same scenarios as the main table,
// for 1, 2, 3… nodes, with autocannon spreading its connections over the node URLs
// round-robin (connection i talks to node i mod N, as a load balancer without sticky
// sessions would). Every node is a plain `createTenantBackend` on the same database with the
// same server key, so a token issued through node 1 works on all of them. CPU per request is
// summed over the nodes, and the PostgreSQL server's is read beside it: on a machine with
// more cores, throughput follows cores ÷ (CPU per request) as long as that sum stays flat.
import { loadavg } from "node:os";
import { SCENARIOS } from "./scenarios.mjs";
import { Skip } from "./http.mjs";
import { measureSide, settle } from "./measure.mjs";

/** A representative set: the session check, record read and write, an indexed list, a counter write, argon2. */
export const NODE_SCENARIOS = ["me", "get", "create", "list-indexed-100k", "usage-increment", "login"];

export async function runNodes({ pg, f, counts, only, connections, warmup, duration }) {
  const names = NODE_SCENARIOS.filter((n) => !only || only.includes(n));
  const nodes = await pg.ensureNodes(Math.max(...counts));
  console.log(`\nnodes on PostgreSQL: ${nodes.map((n) => `${n.url} (pid ${n.pid})`).join(", ")}`);
  const rows = [];
  for (const name of names) {
    const scenario = SCENARIOS.find((s) => s.name === name);
    for (const n of counts) {
      const row = { name, nodes: n, loadAverage: Math.round(loadavg()[0] * 10) / 10 };
      try {
        await settle();
        const side = await scenario.tenantd(f, { connections });
        Object.assign(row, await measureSide({ scenario, children: nodes.slice(0, n), side, connections, warmup, duration, serverCpuMs: pg.server.cpuMs }));
      } catch (e) {
        if (e instanceof Skip) row.skipped = e.message;
        else row.failed = e instanceof Error ? e.message : String(e);
      } finally {
        await pg.server.checkpoint().catch(() => {});
      }
      rows.push(row);
      printNodeRow(row);
    }
  }
  return rows;
}

const fmt = (n, digits = 0) => (n === undefined || Number.isNaN(n) ? "" : n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits }));
const ms = (n) => (n === undefined ? "" : n === 0 ? "<1" : n < 10 ? fmt(n, 1) : fmt(n, 0));
const total = (r) => (r.cpuUsPerRequest === undefined ? undefined : r.cpuUsPerRequest + (r.dbCpuUsPerRequest ?? 0));

function printNodeRow(r) {
  if (r.skipped || r.failed) return console.log(`${r.name} on ${r.nodes} node(s): ${r.skipped ?? `FAILED ${r.failed}`}`);
  const byNode = r.cpuUsPerRequestByNode ? ` (${r.cpuUsPerRequestByNode.map((c) => fmt(c)).join(" + ")})` : "";
  console.log(
    `${r.name} on ${r.nodes} node(s) (load ${r.loadAverage}): ${fmt(r.rps)} req/s p50 ${r.p50} p99 ${r.p99} ms, nodes ${fmt(r.cpuUsPerRequest)} µs CPU/req${byNode} + PostgreSQL ${fmt(r.dbCpuUsPerRequest)}` +
      (r.non2xx || r.errors ? ` (${r.non2xx} non-2xx, ${r.errors} errors)` : ""),
  );
}

const COLUMNS = ["scenario", "nodes", "req/s", "p50 ms", "p99 ms", "CPU µs/req, nodes (summed)", "CPU µs/req, PostgreSQL", "CPU µs/req, total", "req/s per core at that CPU", "non-2xx", "load avg"];

/** The multi-node table (Markdown). "req/s per core" = 1,000,000 ÷ total CPU µs per request. */
export function nodesTable(rows) {
  const body = rows.map((r) => {
    if (r.skipped || r.failed) return `| ${r.name} | ${r.nodes} | ${r.skipped ?? `failed: ${r.failed.split("\n")[0].slice(0, 120)}`} |${" |".repeat(COLUMNS.length - 3)}`;
    const t = total(r);
    return `| ${[r.name, r.nodes, fmt(r.rps), ms(r.p50), ms(r.p99), fmt(r.cpuUsPerRequest), fmt(r.dbCpuUsPerRequest), fmt(t), t ? fmt(1e6 / t) : "", fmt(r.non2xx + r.errors), fmt(r.loadAverage, 1)].join(" | ")} |`;
  });
  return [`| ${COLUMNS.join(" | ")} |`, `|${COLUMNS.map((_, i) => (i === 0 ? "---" : "---:")).join("|")}|`, ...body].join("\n");
}
