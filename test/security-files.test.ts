import { Agent, get, request, type ClientRequest, type IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { serveHttp, signupTenant } from "./_helpers.ts";
import { BOUNDARY, DRIVERS, startFilesBackend } from "./files-helpers.ts";
import { storeRows } from "./_store.ts";

const MiB = 1024 * 1024;

/** A paused reader: it has the answer's headers and first bytes, and reads nothing more. */
function slowReader(url: string, agent: Agent, headers: Record<string, string> = {}): Promise<{ res: IncomingMessage; first: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { agent, headers }, (res) => {
      res.once("data", (chunk: Buffer) => {
        res.pause();
        resolve({ res, first: chunk });
      });
    }).on("error", reject);
  });
}

/** Starts an upload over real HTTP and sends its body only as `send` is called. */
function trickleUpload(url: string, bearer: { accessToken: string; appId: string }) {
  const req: ClientRequest = request(`${url}/api/v1/files/upload`, {
    method: "POST",
    headers: { authorization: `Bearer ${bearer.accessToken}`, "x-service-app": bearer.appId, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
  });
  const answer = new Promise<{ status: number; body: any; retryAfter?: string }>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode!, body: JSON.parse(text), retryAfter: res.headers["retry-after"] }));
    });
    req.on("error", reject);
  });
  answer.catch(() => {});
  req.write(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="slow.txt"\r\n\r\n`);
  return {
    answer,
    send: (text: string | Buffer) => req.write(text),
    /** Sends `total` bytes of one reused chunk, waiting for the socket to drain (the client holds no more than a socket buffer). */
    pump: (chunk: Buffer, total: number) =>
      new Promise<void>((resolve) => {
        let sent = 0;
        const go = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once("drain", go);
          }
          resolve();
        };
        go();
      }),
    finish: () => req.end(`\r\n--${BOUNDARY}--\r\n`),
    abort: () => req.destroy(),
  };
}

describe("public file reads stream from storage (review item 4)", () => {
  it("60 paused readers of a 10 MiB file grow RSS by less than 100 MiB, and ranges stream the right bytes", async () => {
    const t = await startFilesBackend(DRIVERS[0]);
    const { url } = await serveHttp(t.backend);
    const data = Buffer.alloc(10 * MiB);
    for (let i = 0; i < data.length; i += 4) data.writeUInt32LE(i, i);
    const up = await t.upload({ filename: "big.bin", type: "application/octet-stream", data });
    expect(up.status, up.text).toBe(201);
    const path = new URL(up.body.file.url).pathname;

    const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
    const before = process.memoryUsage().rss;
    const readers = await Promise.all(Array.from({ length: 60 }, () => slowReader(`${url}${path}`, agent)));
    // Give the server every chance to read ahead into memory, then look.
    await new Promise((r) => setTimeout(r, 300));
    const grown = process.memoryUsage().rss - before;
    console.log(`RSS growth with 60 paused readers of a 10 MiB file: ${(grown / MiB).toFixed(1)} MiB`);
    expect(grown).toBeLessThan(100 * MiB);
    for (const r of readers) {
      expect(r.res.statusCode).toBe(200);
      expect(r.res.headers["content-length"]).toBe(String(10 * MiB));
      expect(r.first.equals(data.subarray(0, r.first.length))).toBe(true);
      r.res.destroy();
    }

    const ranged = await new Promise<{ status: number; bytes: Buffer }>((resolve, reject) => {
      get(`${url}${path}`, { headers: { range: "bytes=5000000-5000999" } }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode!, bytes: Buffer.concat(chunks) }));
      }).on("error", reject);
    });
    expect(ranged.status).toBe(206);
    expect(ranged.bytes.equals(data.subarray(5_000_000, 5_001_000))).toBe(true);
    agent.destroy();
  }, 60_000);
});

describe("uploads hold no server-wide slot while the body arrives (review item 5)", () => {
  it("slow senders trickling bodies do not block another tenant's upload", async () => {
    const t = await startFilesBackend(DRIVERS[0]);
    const { url } = await serveHttp(t.backend);
    const slow = [trickleUpload(url, t.tenant.bearer), trickleUpload(url, t.tenant.bearer), trickleUpload(url, t.tenant.bearer)];
    for (const s of slow) s.send("a");
    const other = await signupTenant(t);
    // Before: the two global slots were held by the slow senders and this never finished.
    const fast = await t.upload({ filename: "fast.txt", data: "quick" }, other);
    expect(fast.status, fast.text).toBe(201);
    for (const s of slow) s.finish();
    for (const s of slow) expect((await s.answer).status).toBe(201);
  });

  it("caps uploads in flight per tenant with 429 and retry-after, other tenants unaffected", async () => {
    const t = await startFilesBackend(DRIVERS[0]);
    const { url } = await serveHttp(t.backend);
    // Nine slow uploads of one tenant: eight are taken and stay in flight, whichever arrives
    // last is refused at once, and it is the only one answered while the eight trickle.
    const nine = Array.from({ length: 9 }, () => trickleUpload(url, t.tenant.bearer));
    for (const s of nine) s.send("a");
    const first = await Promise.race(nine.map((s, i) => s.answer.then((answer) => ({ i, answer }))));
    expect({ status: first.answer.status, error: first.answer.body.error, retryAfter: first.answer.retryAfter }).toEqual({ status: 429, error: "rate_limited", retryAfter: "1" });
    const slow = nine.filter((_, i) => i !== first.i);
    const other = await signupTenant(t);
    expect((await t.upload({ filename: "ok.txt", data: "fine" }, other)).status).toBe(201);
    for (const s of slow) s.finish();
    for (const s of slow) expect((await s.answer).status).toBe(201);
  });

  it("a body that stalls is refused with 408 request_timeout, and nothing is stored", async () => {
    const t = await startFilesBackend(DRIVERS[0], { bodyIdleTimeoutSeconds: 0.5 });
    const { url } = await serveHttp(t.backend);
    const stalled = trickleUpload(url, t.tenant.bearer);
    stalled.send("abc");
    const res = await stalled.answer;
    expect({ status: res.status, error: res.body.error }).toEqual({ status: 408, error: "request_timeout" });
    expect(await t.storedKeys()).toEqual([]);
  });

  it("15 concurrent 5 MiB uploads stream to disk: RSS grows by less than 100 MiB", async () => {
    const t = await startFilesBackend(DRIVERS[0]);
    const { url } = await serveHttp(t.backend);
    const tenants = await Promise.all(Array.from({ length: 5 }, () => signupTenant(t)));
    const chunk = Buffer.alloc(64 * 1024, 0x62);
    const before = process.memoryUsage().rss;
    let peak = before;
    const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
    const uploads = Array.from({ length: 15 }, (_, i) => trickleUpload(url, tenants[i % 5]!.bearer));
    await Promise.all(uploads.map((u) => u.pump(chunk, 5 * MiB)));
    for (const u of uploads) u.finish();
    const answers = await Promise.all(uploads.map((u) => u.answer));
    clearInterval(timer);
    console.log(`RSS growth with 15 concurrent 5 MiB uploads: ${((peak - before) / MiB).toFixed(1)} MiB`);
    for (const a of answers) expect(a.status).toBe(201);
    expect(peak - before).toBeLessThan(100 * MiB);
  }, 60_000);
});

describe("account deletion during uploads (review item 6)", () => {
  it("uploads running during a self-delete (8 slow, 12 quick) leave no blob and no row behind", async () => {
    const { readdirSync, existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    const t = await startFilesBackend(DRIVERS[0]);
    const { url } = await serveHttp(t.backend);
    const extra = await signupTenant(t);
    void extra;
    const uploads = Array.from({ length: 8 }, () => trickleUpload(url, t.tenant.bearer));
    for (const u of uploads) u.send("x".repeat(1000));
    await new Promise((r) => setTimeout(r, 200));
    const quick = Array.from({ length: 12 }, (_, i) => t.upload({ filename: `q${i}.txt`, data: `quick ${i}` }));
    const del = t.request("POST", "/api/v1/tenants/me/delete", { bearer: t.tenant.bearer, body: {} });
    for (const u of uploads) u.finish();
    const results = await Promise.all([...uploads.map((u) => u.answer.catch(() => ({ status: 0, body: {} }))), ...quick]);
    const deleted = await del;
    expect(deleted.status, deleted.text).toBeLessThan(300);
    const statuses = results.map((r) => r.status);
    // Whatever each upload answered, nothing of the tenant is left.
    expect(statuses.filter((s) => ![201, 401, 429, 0].includes(s)), JSON.stringify(results.map((r) => r.body))).toEqual([]);
    const dir = join(t.dataDir, "files", t.app.id, t.tenant.id);
    const left = existsSync(dir) ? readdirSync(dir) : [];
    expect(left).toEqual([]);
    expect(await storeRows(t.backend).value("SELECT COUNT(*) FROM files WHERE tenant_id = ?", t.tenant.id)).toBe(0);
    // The tenant's token is refused on writes at once.
    expect((await t.upload({ filename: "late.txt", data: "late" })).status).toBe(401);
  });
});

describe("account deletion racing an upload (review item 6)", () => {
  it("an upload that lands after the files were removed, but before the account row goes, leaves no blob", async () => {
    const { readdirSync, existsSync } = await import("node:fs");
    const { join } = await import("node:path");
    const t = await startFilesBackend(DRIVERS[0]);
    await t.upload({ filename: "before.txt", data: "before" });
    let during: { status: number } | undefined;
    // Runs after the files area removed the tenant's blobs: the worst moment for an upload to land.
    t.backend.core.hooks.on("tenant.deleting", async () => {
      during = await t.upload({ filename: "during.txt", data: "during the deletion" });
    });
    const deleted = await t.request("POST", "/api/v1/tenants/me/delete", { bearer: t.tenant.bearer, body: {} });
    expect(deleted.status, deleted.text).toBe(200);
    expect(during?.status).toBe(401);
    const dir = join(t.dataDir, "files", t.app.id, t.tenant.id);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  });
});
