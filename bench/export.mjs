// The tenant export at size (issue 47): a tenant with RECORDS records and FILE_MB of files
// downloads GET /api/v1/account/export over real HTTP; prints the time, the archive's size
// and the server process's RSS growth while it streamed. SQLite, the fs storage driver.
//   npm run build && RECORDS=100000 FILE_MB=1024 node bench/export.mjs
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createServer } from "node:http";
import { createHash, randomBytes } from "node:crypto";
import { createTenantBackend, toNodeHandler } from "../dist/index.js";

const RECORDS = Number(process.env.RECORDS ?? 100_000);
const FILE_MB = Number(process.env.FILE_MB ?? 1024);
const FILE_CHUNK_MB = 16;

const dataDir = mkdtempSync(join(tmpdir(), "tenantd-export-bench-"));
const backend = await createTenantBackend({ dataDir, logger: "error", argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 }, rateLimit: false, accessLog: false });
const { core } = backend;
const app = backend.defaultApp;
const server = createServer(toNodeHandler(backend));
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const url = `http://127.0.0.1:${server.address().port}`;

const signup = await fetch(`${url}/api/v1/auth/signup`, { method: "POST", headers: { "x-service-key": app.publishableKey, "content-type": "application/json" }, body: JSON.stringify({ email: "big@example.com", password: "correct horse battery" }) });
const { accessToken, tenant } = await signup.json();

let t0 = performance.now();
const scope = (collection) => ({ appId: app.id, tenantId: tenant.id, collection, indexed: new Set() });
const now = Date.now();
for (let i = 0; i < RECORDS; i += 1000) {
  await Promise.all(Array.from({ length: Math.min(1000, RECORDS - i) }, (_, j) => core.db.records.insert(scope(`c${(i + j) % 4}`), `rec_${i + j}`, { n: i + j, title: `record ${i + j}`, tags: ["a", "b"], body: "x".repeat(200) }, now + i + j, [])));
}
const blob = randomBytes(FILE_CHUNK_MB * 1024 * 1024);
const sha = createHash("sha256").update(blob).digest("hex");
for (let i = 0; i < FILE_MB / FILE_CHUNK_MB; i++) {
  const pathname = `${app.id}/${tenant.id}/file_${i}.bin`;
  await core.storage.setItemRaw(pathname, blob);
  await core.db.files.insert({ id: `file_${i}`, appId: app.id, tenantId: tenant.id, pathname, sizeBytes: blob.length, mimeType: "application/octet-stream", originalFilename: `part-${i}.bin`, sha256: sha, createdAt: now }, null);
}
console.log(`seeded ${RECORDS} records and ${FILE_MB} MB of files in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

global.gc?.();
const rssBefore = process.memoryUsage().rss;
let rssPeak = rssBefore;
const sampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 100);
t0 = performance.now();
const res = await fetch(`${url}/api/v1/account/export`, { headers: { authorization: `Bearer ${accessToken}`, "x-service-app": app.id } });
let bytes = 0;
for await (const chunk of res.body) bytes += chunk.length;
const seconds = (performance.now() - t0) / 1000;
clearInterval(sampler);
console.log(
  JSON.stringify({ records: RECORDS, fileMB: FILE_MB, status: res.status, archiveMB: +(bytes / 1048576).toFixed(1), seconds: +seconds.toFixed(1), mbPerSecond: +(bytes / 1048576 / seconds).toFixed(0), rssGrowthMB: +((rssPeak - rssBefore) / 1048576).toFixed(1) }),
);
server.close();
await backend.close();
rmSync(dataDir, { recursive: true, force: true });
