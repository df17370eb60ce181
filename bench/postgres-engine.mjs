// The PostgreSQL side of a run: one PostgreSQL server (postgres-server.mjs) and tenantd nodes
// on it (tenantd-pg-server.mjs), all sharing the server key and a files directory, as
// several nodes of one deployment would. Node 1 serves the "tenantd on PostgreSQL" column;
// more nodes start only for the multi-node table. With `raw`, the raw PostgreSQL baseline
// (raw-pg-server.mjs) runs on a database of its own on the same server; with `parse`, Parse
// Server (parse-peer.mjs) on another.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { startChild } from "./children.mjs";
import { startPostgresServer } from "./postgres-server.mjs";
import { PARSE_SERVER } from "./parse-peer.mjs";

export async function startPostgresEngine({ env: extraEnv, raw: withRaw = false, parse: withParse = false } = {}) {
  const server = await startPostgresServer();
  const dataDir = mkdtempSync(join(tmpdir(), "tenantd-bench-pgfiles-"));
  const env = { ...extraEnv, BENCH_PG_URL: server.url, BENCH_SECRET_KEY: randomBytes(32).toString("hex"), BENCH_DATA_DIR: dataDir };
  const nodes = [];
  const startNode = async () => {
    const node = await startChild("./tenantd-pg-server.mjs", { env: { ...env, BENCH_FIRST_NODE: nodes.length === 0 ? "1" : "0" } });
    nodes.push(node);
    return node;
  };
  let first;
  let raw;
  let parse;
  try {
    first = await startNode();
    if (withRaw) raw = await startChild("./raw-pg-server.mjs", { env: { ...extraEnv, BENCH_PG_URL: await server.createDatabase("raw_bench") } });
    if (withParse) parse = await startChild(PARSE_SERVER, { env: { ...extraEnv, BENCH_PG_URL: await server.createDatabase("parse_bench") } });
  } catch (e) {
    await Promise.all([first?.stop(), raw?.stop()]);
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  }
  return {
    server,
    /** The first node: the app lives there (it bootstrapped it), and the fixtures talk to it. */
    node: first,
    nodes,
    /** The raw PostgreSQL baseline (with `raw`), or undefined. */
    raw,
    /** Parse Server (with `parse`), or undefined. */
    parse,
    /** Starts nodes (one at a time: each joins the migrated database) until there are `n`. */
    async ensureNodes(n) {
      while (nodes.length < n) await startNode();
      return nodes.slice(0, n);
    },
    async stop() {
      await Promise.all([...nodes.map((n) => n.stop()), raw?.stop(), parse?.stop()]);
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
