import { createServer, type AddressInfo } from "node:net";
import { createServer as createHttpServer, request as httpRequest } from "node:http";
import { describe, expect, test } from "vitest";
import { createTenantBackend, ConfigError } from "../src/index.ts";
import { createS3Bucket } from "../src/files/s3.ts";
import type { Logger } from "../src/log.ts";
import { afterThisTest, expectError, signupTenant, tempDir, opaqueBytes } from "./_helpers.ts";
import { BOUNDARY, DRIVERS, multipart, sample, startFilesBackend } from "./files-helpers.ts";
import { s3Client, s3Env, s3Server, s3Storage } from "./_s3.ts";
import { serve, spawnCli } from "./_serve.ts";

/**
 * What only S3 adds to the files behaviour (test/files.test.ts runs all of it on S3 too):
 * objects as a bucket serves them, a public base URL on the bucket, S3 failing at startup
 * and while running, listing by prefix over pages, and `tenantd serve` on S3.
 */

const S3 = DRIVERS.find((d) => d.name === "s3")!;
const MiB = 1024 * 1024;

const object = (bucket: string, key: string, init?: RequestInit) => s3Client().fetch(`${s3Server().endpoint}/${bucket}/${key}`, init);

function capture(): Logger & { text(): string } {
  const lines: string[] = [];
  const log = (level: string) => (msg: string, fields?: object) => lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  return { debug: log("debug"), info: log("info"), warn: log("warn"), error: log("error"), text: () => lines.join("\n") };
}

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe("files on S3", () => {
  test("an upload streams into the bucket as an object with the bytes and the headers a CDN would serve", async () => {
    const t = await startFilesBackend(S3);
    const bucket = (t.backend.core.config.storageChoice as { bucket: string }).bucket;
    const data = opaqueBytes(3 * MiB);
    const file = (await t.upload({ filename: "report.pdf", data: Buffer.concat([sample("pdf", 16), data]) })).body.file;
    const res = await object(bucket, file.pathname);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.concat([sample("pdf", 16), data]))).toBe(true);
    expect(Object.fromEntries(["content-type", "content-disposition", "cache-control", "content-length"].map((h) => [h, res.headers.get(h)]))).toEqual({
      "content-type": "application/pdf",
      "content-disposition": `attachment; filename="report.pdf"; filename*=UTF-8''report.pdf`,
      "cache-control": "public, max-age=31536000, immutable",
      "content-length": String(data.length + 16),
    });
    // Only the object: no temp copies left in the bucket.
    expect(await t.storedKeys()).toEqual([file.pathname.replace(/\//g, ":")]);
  });

  test("files.publicBaseUrl: file URLs point at the blob itself, which the bucket serves with its type; tenantd's URL keeps working", async () => {
    const storage = await s3Storage();
    const base = `${storage.endpoint}/${storage.bucket}`;
    const t = await startFilesBackend(S3, { storage, files: { publicBaseUrl: `${base}/` } });
    const data = sample("png", 5000);
    const file = (await t.upload({ filename: "cat.png", data })).body.file;
    expect(file.url).toBe(`${base}/${t.app.id}/${t.tenant.id}/${file.id}.png`);
    const direct = await fetch(file.url, { headers: { range: "bytes=0-7" } });
    expect({ status: direct.status, type: direct.headers.get("content-type"), disposition: direct.headers.get("content-disposition") }).toEqual({
      status: 206,
      type: "image/png",
      disposition: `inline; filename="cat.png"; filename*=UTF-8''cat.png`,
    });
    expect(Buffer.from(await direct.arrayBuffer()).equals(data.subarray(0, 8))).toBe(true);
    const own = await t.fetchPublic(`http://localhost/api/v1/public/files/${file.id}/cat.png`);
    expect({ status: own.status, same: own.bytes.equals(data), nosniff: own.headers.get("x-content-type-options") }).toEqual({ status: 200, same: true, nosniff: "nosniff" });
  });

  test("files.publicBaseUrl and files.cdnBaseUrl together are refused at startup", async () => {
    const err = await createTenantBackend({ dataDir: tempDir(), logger: "silent", files: { publicBaseUrl: "https://files.example.com", cdnBaseUrl: "https://cdn.example.com" } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/files\.cdnBaseUrl .*files\.publicBaseUrl.*not both/);
  });

  test("a range is read from S3 as a range: 206 with the right headers, also near the end of a 10 MiB file", async () => {
    const t = await startFilesBackend(S3);
    const data = opaqueBytes(10 * MiB);
    const up = await t.upload({ filename: "big.bin", data });
    expect(up.status, up.text).toBe(201);
    const { url } = up.body.file;
    for (const [range, start, end] of [["bytes=5242880-5242889", 5242880, 5242889], ["bytes=-3", 10 * MiB - 3, 10 * MiB - 1], ["bytes=10485000-", 10485000, 10 * MiB - 1]] as const) {
      const res = await t.fetchPublic(url, { range });
      expect({ range, status: res.status, contentRange: res.headers.get("content-range"), length: res.headers.get("content-length"), same: res.bytes.equals(data.subarray(start, end + 1)) }).toEqual({
        range,
        status: 206,
        contentRange: `bytes ${start}-${end}/${10 * MiB}`,
        length: String(end - start + 1),
        same: true,
      });
    }
    const head = await t.backend.fetch(new Request(`http://localhost${new URL(url).pathname}`, { method: "HEAD" }));
    expect({ status: head.status, length: head.headers.get("content-length"), body: (await head.arrayBuffer()).byteLength }).toEqual({ status: 200, length: String(10 * MiB), body: 0 });
  });

  test("listing by prefix reads every page: an account deletion sweeps all of the tenant's blobs, also ones without a row", async () => {
    const t = await startFilesBackend(S3);
    const bucket = (t.backend.core.config.storageChoice as { bucket: string }).bucket;
    const kept = (await t.upload({ filename: "other.txt", data: "someone else's" }, await signupTenant(t))).body.file;
    await t.upload({ filename: "mine.txt", data: "mine" });
    // Blobs of uploads that were in flight during the deletion have no row yet.
    for (let i = 0; i < 5; i++) await object(bucket, `${t.app.id}/${t.tenant.id}/orphan-${i}.bin`, { method: "PUT", body: "x" });
    const s3 = createS3Bucket({ ...s3Server(), bucket, region: "us-east-1" });
    expect((await s3.list(`${t.app.id}:${t.tenant.id}:`, 2)).sort()).toHaveLength(6);

    const del = await t.request("POST", "/api/v1/tenants/me/delete", { bearer: t.tenant.bearer });
    expect(del.status).toBe(200);
    expect(await s3.list("", 2)).toEqual([kept.pathname]);
  });

  test("the bucket gone while running: upload, read, delete and account deletion answer 503 unavailable, never 500, and the log names S3's error without the secret", async () => {
    const logger = capture();
    const storage = await s3Storage();
    const t = await startFilesBackend(S3, { storage, logger });
    const file = (await t.upload({ filename: "a.png", data: sample("png") })).body.file;
    const bucket = storage.bucket!;
    expect((await object(bucket, file.pathname, { method: "DELETE" })).status).toBe(204);
    expect((await s3Client().fetch(`${s3Server().endpoint}/${bucket}`, { method: "DELETE" })).status).toBe(204);

    expectError(await t.upload({ filename: "b.png", data: sample("png") }), 503, "unavailable");
    const read = await t.fetchPublic(file.url);
    expect({ status: read.status, error: read.json?.error }).toEqual({ status: 503, error: "unavailable" });
    expect((await t.fetchPublic(file.url, { range: "bytes=0-9" })).status).toBe(503);
    expectError(await t.request("DELETE", `/api/v1/files/${file.id}`, { bearer: t.tenant.bearer }), 503, "unavailable");
    // The row stays, so the delete can be retried once the bucket is back.
    expect((await t.request("GET", `/api/v1/files/${file.id}`, { bearer: t.tenant.bearer })).status).toBe(200);
    expect(await t.backend.core.db.files.usedBytes(t.app.id, t.tenant.id)).toBe(file.sizeBytes);
    // An account deletion cannot remove the blob: 503, and the account is still there to retry.
    expectError(await t.request("POST", "/api/v1/tenants/me/delete", { bearer: t.tenant.bearer }), 503, "unavailable");
    expect((await t.request("GET", `/api/v1/files/${file.id}`, { bearer: t.tenant.bearer })).status).toBe(200);
    expect(logger.text()).toContain("NoSuchBucket");
    expect(logger.text()).not.toContain(storage.secretAccessKey);
  });
});

/**
 * An S3 endpoint that answers the first `failures` object writes with 503 SlowDown (after
 * reading part of the body, as a busy S3 does) and passes everything else to the local server.
 */
async function flakyS3(failures: number): Promise<{ endpoint: string; refused: () => number }> {
  const target = new URL(s3Server().endpoint);
  let refused = 0;
  const server = createHttpServer((req, res) => {
    const isWrite = req.method === "PUT" && new URL(req.url!, "http://x").pathname.split("/").filter(Boolean).length > 1;
    if (isWrite && refused < failures) {
      refused++;
      req.once("data", () => {
        res.writeHead(503, { "content-type": "application/xml", connection: "close" });
        res.end("<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>");
        req.destroy();
      });
      return;
    }
    const upstream = httpRequest({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      up.pipe(res);
    });
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  afterThisTest(() => new Promise((r) => server.close(r)));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refused: () => refused };
}

describe("S3 failing for a moment", () => {
  test("an upload S3 refuses twice with 503 SlowDown is sent again from the start and stored whole", async () => {
    const flaky = await flakyS3(2);
    const storage = await s3Storage({ endpoint: flaky.endpoint });
    const t = await startFilesBackend(S3, { storage });
    const data = opaqueBytes(3 * MiB);
    const up = await t.upload({ filename: "retry.bin", data });
    expect(up.status, up.text).toBe(201);
    expect(flaky.refused()).toBe(2);
    const res = await object(storage.bucket!, up.body.file.pathname);
    expect(Buffer.from(await res.arrayBuffer()).equals(data)).toBe(true);
  });

  test("an upload S3 keeps refusing answers 503 unavailable, and no row is left", async () => {
    const flaky = await flakyS3(Infinity);
    const t = await startFilesBackend(S3, { storage: await s3Storage({ endpoint: flaky.endpoint }) });
    expectError(await t.upload({ filename: "never.bin", data: opaqueBytes(1 * MiB) }), 503, "unavailable");
    expect(flaky.refused()).toBe(4);
    expect(await t.backend.core.db.files.usedBytes(t.app.id, t.tenant.id)).toBe(0);
    expect(await t.storedKeys()).toEqual([]);
  });
});

describe("S3 configuration", () => {
  const start = (storage: object) => createTenantBackend({ dataDir: tempDir(), logger: "silent", storage: storage as never }).catch((e: unknown) => e);

  test.each([
    { case: "a bucket that does not exist", change: { bucket: "no-such-bucket-here" }, says: [/bucket "no-such-bucket-here" does not exist/, /storage\.bucket/, /TENANTD_S3_BUCKET/] },
    { case: "an unknown access key id", change: { accessKeyId: "NOT-A-KEY" }, says: [/refused the credentials/, /storage\.accessKeyId/, /TENANTD_S3_SECRET_ACCESS_KEY/, /InvalidAccessKeyId/] },
    { case: "a wrong secret", change: { secretAccessKey: "wrong-secret-value" }, says: [/refused the credentials/, /storage\.secretAccessKey/, /SignatureDoesNotMatch/] },
  ])("$case: the server refuses to start, naming the option", async ({ change, says }) => {
    const storage = { ...(await s3Storage()), ...change };
    const err = await start(storage);
    expect(err).toBeInstanceOf(ConfigError);
    for (const s of says) expect((err as Error).message).toMatch(s);
    expect((err as Error).message).not.toContain("wrong-secret-value");
  });

  test("an endpoint nothing answers on: refused, naming storage.endpoint", async () => {
    const err = await start({ ...(await s3Storage()), endpoint: `http://127.0.0.1:${await closedPort()}` });
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/cannot reach S3 at http:\/\/127\.0\.0\.1:\d+ \(ECONNREFUSED\): check storage\.endpoint \(env TENANTD_S3_ENDPOINT\)/);
  });

  test.each([
    [{ driver: "s3", bucket: "b-1", accessKeyId: "k" }, /storage\.secretAccessKey is not set: set TENANTD_S3_SECRET_ACCESS_KEY/],
    [{ driver: "s3" }, /storage\.bucket is not set: set TENANTD_S3_BUCKET/],
    [{ driver: "s3", bucket: "Bad_Bucket" }, /storage\.bucket must be an S3 bucket name/],
    [{ driver: "gcs" }, /storage\.driver must be one of fs, s3/],
    [{ drivr: "s3" }, /unknown option storage\.drivr.*Did you mean storage\.driver/],
    [{ driver: "s3", bucket: "b-1", accessKeyId: "k", secretAccessKey: "s", endpoint: "minio:9000" }, /storage\.endpoint must be an http\(s\) URL/],
  ])("bad storage options fail at startup naming the option: %j", async (storage, message) => {
    const err = await start(storage);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(message);
  });
});

describe("tenantd serve on S3", () => {
  test("TENANTD_STORAGE=s3 serves uploads from the bucket, ranges included; a missing bucket stops it at start", async () => {
    const storage = await s3Storage();
    const s = await serve(tempDir(), [], s3Env(storage));
    const key = /publishable key:\s+(\S+)/.exec(s.stdout())![1]!;
    const appId = /app id:\s+(\S+)/.exec(s.stdout())![1]!;
    const signup = await fetch(`${s.url}/api/v1/auth/signup`, { method: "POST", headers: { "x-service-key": key, "content-type": "application/json" }, body: JSON.stringify({ email: "s3@example.com", password: "a long password" }) });
    const { accessToken } = (await signup.json()) as { accessToken: string };
    const data = opaqueBytes(2 * MiB);
    const up = await fetch(`${s.url}/api/v1/files/upload`, {
      method: "POST",
      headers: { authorization: `Bearer ${accessToken}`, "x-service-app": appId, "content-type": `multipart/form-data; boundary=${BOUNDARY}` },
      body: multipart([{ filename: "blob.bin", data }]),
    });
    expect(up.status).toBe(201);
    const { file } = (await up.json()) as { file: { url: string; pathname: string } };
    const inBucket = await object(storage.bucket!, file.pathname);
    expect(Buffer.from(await inBucket.arrayBuffer()).equals(data)).toBe(true);
    const path = new URL(file.url).pathname;
    const whole = await fetch(`${s.url}${path}`);
    expect(Buffer.from(await whole.arrayBuffer()).equals(data)).toBe(true);
    const part = await fetch(`${s.url}${path}`, { headers: { range: "bytes=1000-1999" } });
    expect({ status: part.status, range: part.headers.get("content-range") }).toEqual({ status: 206, range: `bytes 1000-1999/${2 * MiB}` });
    expect(Buffer.from(await part.arrayBuffer()).equals(data.subarray(1000, 2000))).toBe(true);
    s.child.kill("SIGTERM");
    await s.exited;

    const missing = spawnCli(["serve", "--port", "0", "--data-dir", tempDir()], { ...s3Env(storage), TENANTD_S3_BUCKET: "no-such-bucket", TENANTD_S3_SECRET_ACCESS_KEY: storage.secretAccessKey! });
    const { code } = await missing.exited;
    expect(code).not.toBe(0);
    expect(missing.stderr()).toMatch(/bucket "no-such-bucket" does not exist.*storage\.bucket \(env TENANTD_S3_BUCKET\)/);
    expect(missing.stdout()).not.toContain("listening on");
  });

  test("config print shows the S3 options and hides the secret", async () => {
    const storage = await s3Storage({ secretAccessKey: "s3-secret-never-shown" });
    const run = spawnCli(["config", "print", "--json"], s3Env(storage), tempDir());
    expect((await run.exited).code).toBe(0);
    const options = (JSON.parse(run.stdout()) as { options: { option: string; value: unknown }[] }).options;
    const value = (o: string) => options.find((x) => x.option === o)?.value;
    expect({ driver: value("storage.driver"), bucket: value("storage.bucket"), secret: value("storage.secretAccessKey") }).toEqual({ driver: "s3", bucket: storage.bucket, secret: "[redacted]" });
    expect(run.stdout()).not.toContain("s3-secret-never-shown");
  });
});
