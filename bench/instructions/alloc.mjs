// Bytes allocated per request of one server alone, by allocation site (docs/performance.md,
// sixteenth round): V8's sampling heap profiler, counting objects the GC has already freed.
//   node bench/instructions/alloc.mjs tenantd|raw <scenario> [requests=10000] [warm-up=20000]
// The scenarios are count.sh's, except refresh (its chain of tokens restarts per client run).
import { Session } from "node:inspector/promises";
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const [kind = "tenantd", scenario = "me", requests = "10000", warm = "20000"] = process.argv.slice(2);
// server.mjs prints its one line ({port, request}) on stdout: caught here, in this process.
const line = new Promise((resolve) => {
  const write = process.stdout.write.bind(process.stdout);
  let text = "";
  process.stdout.write = (chunk) => {
    text += chunk;
    if (!text.includes("\n")) return true;
    process.stdout.write = write;
    resolve(text.trim());
    return true;
  };
});
process.argv.splice(2, process.argv.length, kind, scenario);
await import("./server.mjs");
const server = await line;

/** client.mjs in its own process (pid 0: no callgrind to switch): `n` requests on one keep-alive connection. */
const send = (n) =>
  new Promise((resolve, reject) => {
    const client = spawn(process.execPath, [fileURLToPath(new URL("./client.mjs", import.meta.url)), server, "0", String(n), "0"], { stdio: "inherit" });
    client.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`client exited with ${code}`))));
  });

await send(Number(warm));
const session = new Session();
session.connect();
await session.post("HeapProfiler.startSampling", { samplingInterval: 256, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true });
await send(Number(requests));
const { profile } = await session.post("HeapProfiler.stopSampling");

const bySite = new Map();
let total = 0;
const walk = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const site = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(node_modules|dist|bench)\//, "$1/")}:${lineNumber + 1}`;
  total += node.selfSize;
  if (node.selfSize) bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
  for (const child of node.children) walk(child);
};
walk(profile.head);
const per = (bytes) => Math.round(bytes / Number(requests));
console.log(`${kind} ${scenario}: ${per(total)} bytes allocated per request (${requests} requests after ${warm}), by site:`);
for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`${String(per(bytes)).padStart(7)}  ${site}`);
process.exit(0);
