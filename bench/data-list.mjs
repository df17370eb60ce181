// Record list on a large, skewed collection: a filter on an indexed field against the same
// filter on an unindexed one, with the query plans. Never run it inside the test suite.
//
//   npm run build && node bench/data-list.mjs [--records 100000] [--duration 10] [--plan-only]
//
// Skew (PERFORMANCE.md): 1% of the records match, and they are the oldest, so a plan that
// walks the newest-first index has to step over every non-matching record.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import { parseArgs } from "node:util";
import autocannon from "autocannon";
import { toNodeHandler } from "h3/node";
import { createTenantBackend } from "../dist/index.js";
import { parseFilter, parseSort } from "../dist/data/query.js";
import { recordScope } from "../dist/data/records.js";

const { values: args } = parseArgs({
  options: {
    records: { type: "string", default: "100000" },
    duration: { type: "string", default: "10" },
    "plan-only": { type: "boolean", default: false },
  },
});
const total = Number(args.records);
const dataDir = mkdtempSync(join(tmpdir(), "tenantd-bench-"));
const backend = await createTenantBackend({ dataDir, logger: "silent", rateLimit: false });
try {
  const app = backend.defaultApp;
  await backend.admin.updateApp(app.id, { settings: { collections: { items: { indexed: ["status", "n"] } } } });
  const signup = await backend.fetch(
    new Request("http://bench/api/v1/auth/signup", {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-key": app.publishableKey },
      body: JSON.stringify({ email: "bench@example.com", password: "bench password 1" }),
    }),
  );
  const { tenant, accessToken } = await signup.json();

  // Seeded through the records repository, all in one transaction (nested writes become savepoints).
  const core = backend.core;
  const liveApp = await core.db.apps.findById(app.id);
  const { scope } = recordScope({ app: liveApp, tenantId: tenant.id }, "items");
  const started = Date.now();
  core.sqlite.transaction(() => {
    for (let i = 0; i < total; i++) {
      const open = i < total / 100;
      const data = { status: open ? "open" : "done", kind: open ? "open" : "done", n: i, title: `item ${i}` };
      void core.db.records.insert(scope, `rec_bench${i}`, data, started + i, []);
    }
  })();
  console.log(`seeded ${total} records in ${Date.now() - started} ms`);

  const cases = [
    { name: "indexed field   ", filter: '{"status":"open"}' },
    { name: "unindexed field ", filter: '{"kind":"open"}' },
    { name: "indexed range+sort", filter: '{"n":{"$lt":1000}}', sort: '{"n":-1}' },
  ];
  for (const c of cases) {
    const plan = await core.db.records.explainList(scope, parseFilter(c.filter), parseSort(c.sort));
    console.log(`${c.name} plan: ${plan.join(" | ")}`);
  }
  if (!args["plan-only"]) {
    const server = createServer(toNodeHandler(backend));
    await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${server.address().port}`;
    for (const c of cases) {
      const query = new URLSearchParams({ filter: c.filter, limit: "20", ...(c.sort ? { sort: c.sort } : {}) });
      const result = await autocannon({
        url: `${base}/api/v1/data/items?${query}`,
        connections: 10,
        duration: Number(args.duration),
        headers: { authorization: `Bearer ${accessToken}`, "x-service-app": app.id },
      });
      console.log(`${c.name} ${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms, non-2xx ${result.non2xx}`);
    }
    await new Promise((resolve) => server.close(resolve));
  }
} finally {
  await backend.close();
  rmSync(dataDir, { recursive: true, force: true });
}
