import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTenantBackend } from "../dist/index.js";
const backend = await createTenantBackend({ dataDir: mkdtempSync(join(tmpdir(), "tdm-")), logger: "silent", rateLimit: false, argon2: { memoryCost: 1024, timeCost: 1, parallelism: 1 } });
const app = backend.defaultApp;
const r = await backend.fetch(new Request("http://x/api/v1/auth/signup", { method: "POST", headers: { "content-type": "application/json", "x-service-key": app.publishableKey }, body: JSON.stringify({ email: "a@b.co", password: "password123" }) }));
const { accessToken } = await r.json();
const headers = { authorization: `Bearer ${accessToken}`, "x-service-app": app.id };
for (const round of [1, 2, 3]) {
  const n = 20000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) { const res = await backend.fetch(new Request("http://x/api/v1/auth/me", { headers })); await res.text(); }
  console.log("me µs/req", ((performance.now() - t0) * 1000 / n).toFixed(1));
}
await backend.close();
