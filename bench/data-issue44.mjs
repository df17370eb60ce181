// Issue 44's targets, on SQLite, in process (backend.fetch, no sockets): a batch of 100
// creates against 100 single creates (records/s), the p50 of a full-text search, and the p50
// of a deep cursor page against page 1. Never run it inside the test suite.
//
//   npm run build && node bench/data-issue44.mjs [--records 100000] [--duration 1]
//
// --duration is the seconds each measurement runs. Targets (issue 44): batch ≥ 5× single;
// search p50 ≤ 10 ms at 1M records; cursor page 1,000 within 1.5× of page 1 (100k records,
// 100 per page here, so page 1,000 needs --records 100000).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { createTenantBackend } from "../dist/index.js";
import { recordScope } from "../dist/data/records.js";

const { values: args } = parseArgs({ options: { records: { type: "string", default: "100000" }, duration: { type: "string", default: "1" } } });
const total = Number(args.records);
const seconds = Number(args.duration);
const dataDir = mkdtempSync(join(tmpdir(), "tenantd-bench-44-"));
const backend = await createTenantBackend({ dataDir, logger: "silent", rateLimit: false });

const WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango".split(" ");
const p50 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

try {
  const app = backend.defaultApp;
  await backend.admin.updateApp(app.id, { settings: { collections: { items: { search: { language: "en" } } }, quotas: { records: null } } });
  const signup = await backend.fetch(
    new Request("http://bench/api/v1/auth/signup", {
      method: "POST",
      headers: { "content-type": "application/json", "x-service-key": app.publishableKey },
      body: JSON.stringify({ email: "bench@example.com", password: "bench password 1" }),
    }),
  );
  const { tenant, accessToken } = await signup.json();
  const auth = { authorization: `Bearer ${accessToken}`, "x-service-app": app.id };
  const send = async (method, path, body) => {
    const res = await backend.fetch(new Request(`http://bench${path}`, { method, headers: { ...auth, ...(body ? { "content-type": "application/json" } : {}) }, body: body && JSON.stringify(body) }));
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };

  // Seeded through the records repository in one transaction; every record has words (search on).
  const core = backend.core;
  const { scope } = recordScope({ app: await core.db.apps.findById(app.id), tenantId: tenant.id }, "items");
  const started = Date.now();
  core.sqlite.transaction(() => {
    for (let i = 0; i < total; i++) {
      const title = `${WORDS[i % 20]} ${WORDS[(i * 7) % 20]} item${i}`;
      void core.db.records.insert(scope, `rec_b${i}`, { title, n: i }, started + i, []);
    }
  })();
  console.log(`seeded ${total} records (search on) in ${Date.now() - started} ms`);

  // Writes go to their own collection so the list figures stay put.
  const until = () => Date.now() + seconds * 1000;
  let singles = 0;
  for (const end = until(); Date.now() < end; ) {
    for (let i = 0; i < 100; i++) await send("POST", "/api/v1/data/writes", { data: { title: "single", i } });
    singles += 100;
  }
  const singleRate = singles / seconds;
  let batched = 0;
  const ops = Array.from({ length: 100 }, (_, i) => ({ op: "create", collection: "writes", data: { title: "batched", i } }));
  for (const end = until(); Date.now() < end; ) {
    await send("POST", "/api/v1/batch", { operations: ops });
    batched += 100;
  }
  const batchRate = batched / seconds;

  const time = async (path) => {
    const xs = [];
    for (const end = until(); Date.now() < end; ) {
      const t0 = performance.now();
      await send("GET", path);
      xs.push(performance.now() - t0);
    }
    return p50(xs);
  };
  const search = (s) => `/api/v1/data/items?${new URLSearchParams({ filter: JSON.stringify({ $text: { $search: s } }), limit: "20" })}`;
  const searchRare = await time(search("item4242"));
  const searchCommon = await time(search("alpha"));

  // Walks to page 1,000 (or the last) by cursor, then times that page against page 1.
  const pageSize = 100;
  const first = `/api/v1/data/items?limit=${pageSize}`;
  let next = (await send("GET", first)).next;
  const depth = Math.min(1000, Math.floor(total / pageSize));
  for (let p = 2; p < depth && next; p++) next = (await send("GET", `${first}&after=${encodeURIComponent(next)}`)).next;
  const pageOne = await time(first);
  const pageDeep = next ? await time(`${first}&after=${encodeURIComponent(next)}`) : NaN;
  const pageOffset = await time(`${first}&offset=${(depth - 1) * pageSize}`);

  const f = (x) => x.toFixed(2);
  console.log(`| measure | value | target |`);
  console.log(`| --- | --- | --- |`);
  console.log(`| 100 single creates | ${Math.round(singleRate)} records/s | |`);
  console.log(`| batch of 100 creates | ${Math.round(batchRate)} records/s (${f(batchRate / singleRate)}×) | ≥ 5× |`);
  console.log(`| search, one rare word, p50 (${total} records) | ${f(searchRare)} ms | ≤ 10 ms at 1M |`);
  console.log(`| search, one word in 5% of records, p50 | ${f(searchCommon)} ms | |`);
  console.log(`| list page 1 (${pageSize} records), p50 | ${f(pageOne)} ms | |`);
  console.log(`| cursor page ${depth}, p50 | ${f(pageDeep)} ms (${f(pageDeep / pageOne)}×) | ≤ 1.5× page 1 |`);
  console.log(`| offset page ${depth}, p50 | ${f(pageOffset)} ms (${f(pageOffset / pageOne)}×) | |`);
} finally {
  await backend.close();
  rmSync(dataDir, { recursive: true, force: true });
}
