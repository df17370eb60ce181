// What realtime adds to a record write that nobody streams (issue 41: "a write pays <= 2 µs
// more"): the write asks the hub whether its app's writes are wanted (src/data/records.ts
// writeScope → hub.wants). This calls exactly that, CALLS times, on a backend with no
// stream, and prints ns per call. Under callgrind the difference of two runs' totals
// (CALLS=0 and CALLS=10000000) is its instructions per call, free of the machine's load:
//   node bench/realtime-hook.mjs
//   DATABASE_URL=postgres://… node bench/realtime-hook.mjs        (PostgreSQL: the node listens for announcements)
//   for n in 0 10000000; do CALLS=$n valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.$n node --single-threaded bench/realtime-hook.mjs; done
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTenantBackend } from "../dist/index.js";

const CALLS = Number(process.env.CALLS ?? 10_000_000);
const dir = mkdtempSync(join(tmpdir(), "tenantd-realtime-hook-"));
const backend = await createTenantBackend({ dataDir: dir, logger: "error", ...(process.env.DATABASE_URL && { database: { url: process.env.DATABASE_URL } }) });
const hub = backend.core.realtime;
const appId = backend.defaultApp.id;
// On PostgreSQL the hub reads which apps are wanted once its channel is live: let it.
await new Promise((r) => setTimeout(r, 1000));
hub.wants(appId);
let wanted = 0;
const started = process.hrtime.bigint();
for (let i = 0; i < CALLS; i++) if (hub.wants(appId)) wanted++;
const ns = Number(process.hrtime.bigint() - started) / Math.max(1, CALLS);
console.log(JSON.stringify({ engine: process.env.DATABASE_URL ? "postgres" : "sqlite", calls: CALLS, wanted, nsPerCall: Math.round(ns * 100) / 100 }));
await backend.close();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
