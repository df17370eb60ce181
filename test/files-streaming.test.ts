import { createHash, randomBytes } from "node:crypto";
import { request } from "node:http";
import { describe, expect, test } from "vitest";
import { readFilePart } from "../src/files/multipart.ts";
import type { Spool } from "../src/files/blob-io.ts";
import type { BodyChunks } from "../src/http/body-chunks.ts";
import { serveHttp } from "./_helpers.ts";
import { BOUNDARY, DRIVERS, multipart, sample, startFilesBackend } from "./files-helpers.ts";

const MiB = 1024 * 1024;
/** What the process may grow by while a refused body streams in: far below the 200 MiB sent. */
const HEAP_GROWTH_BOUND = 64 * MiB;
const RSS_GROWTH_BOUND = 128 * MiB;

/** Peak growth of heap + array buffers and of RSS over the run of `fn`, sampled every few ms. */
async function measureGrowth<T>(fn: () => Promise<T>): Promise<{ result: T; heap: number; rss: number }> {
  const used = () => {
    const m = process.memoryUsage();
    return { heap: m.heapUsed + m.arrayBuffers, rss: m.rss };
  };
  const base = used();
  const peak = { ...base };
  const timer = setInterval(() => {
    const now = used();
    peak.heap = Math.max(peak.heap, now.heap);
    peak.rss = Math.max(peak.rss, now.rss);
  }, 5);
  try {
    const result = await fn();
    return { result, heap: peak.heap - base.heap, rss: peak.rss - base.rss };
  } finally {
    clearInterval(timer);
  }
}

interface StreamOptions {
  /** bytes generated on the fly after the part headers */
  total: number;
  /** which part carries the flood: the file itself or another form field */
  floodPart: "file" | "field";
  /** declare the full size up front instead of sending chunked */
  honestLength?: boolean;
}

/**
 * Sends a multipart upload over real HTTP, generating the body on the fly from one reused
 * chunk (the client holds no more than a socket buffer), and stops sending once the
 * answer arrives. Reports the status, body and how many bytes were written by then.
 */
function streamUpload(url: string, bearer: { accessToken: string; appId: string }, opts: StreamOptions) {
  const chunk = Buffer.alloc(64 * 1024, 0x61);
  const head =
    opts.floodPart === "file"
      ? `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="huge.bin"\r\n\r\n`
      : `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="a.txt"\r\n\r\nsmall\r\n--${BOUNDARY}\r\ncontent-disposition: form-data; name="notes"\r\n\r\n`;
  const tail = `\r\n--${BOUNDARY}--\r\n`;
  const headers: Record<string, string> = {
    authorization: `Bearer ${bearer.accessToken}`,
    "x-service-app": bearer.appId,
    "content-type": `multipart/form-data; boundary=${BOUNDARY}`,
  };
  if (opts.honestLength) headers["content-length"] = String(head.length + opts.total + tail.length);
  return new Promise<{ status: number; body: any; written: number }>((resolve, reject) => {
    let written = 0;
    let answered = false;
    const req = request(`${url}/api/v1/files/upload`, { method: "POST", headers });
    req.on("response", (res) => {
      answered = true;
      let text = "";
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        resolve({ status: res.statusCode!, body: JSON.parse(text), written });
        req.destroy();
      });
    });
    req.on("error", (e) => {
      if (!answered) reject(new Error(`upload failed after ${written} bytes without an answer: ${e.message}`));
    });
    req.write(head);
    const pump = () => {
      while (!answered && written < opts.total) {
        const n = Math.min(chunk.length, opts.total - written);
        written += n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) return void req.once("drain", pump);
      }
      if (!answered) req.end(tail);
    };
    pump();
  });
}

describe.each(DRIVERS)("streaming uploads over HTTP on the $name driver", (driver) => {
  test.each([
    { case: "a 200 MiB file sent chunked", floodPart: "file", honestLength: false },
    { case: "a 200 MiB file with an honest content-length", floodPart: "file", honestLength: true },
    { case: "a small file followed by a 200 MiB form field", floodPart: "field", honestLength: false },
  ] as const)("$case is refused with 413 after about 10 MiB, with memory bounded", async ({ floodPart, honestLength }) => {
    const t = await startFilesBackend(driver);
    const { url } = await serveHttp(t.backend);
    const { result, heap, rss } = await measureGrowth(() => streamUpload(url, t.tenant.bearer, { total: 200 * MiB, floodPart, honestLength }));
    expect({ status: result.status, error: result.body.error }).toEqual({ status: 413, error: "payload_too_large" });
    // the server stopped taking the body soon after the limit: the rest was never sent
    expect(result.written).toBeLessThan(48 * MiB);
    expect(heap).toBeLessThan(HEAP_GROWTH_BOUND);
    expect(rss).toBeLessThan(RSS_GROWTH_BOUND);
    expect(await t.storedKeys()).toEqual([]);

    // the server still answers on a new connection
    const small = await streamUpload(url, t.tenant.bearer, { total: 1000, floodPart: "file" });
    expect(small.status).toBe(201);
    expect(small.body.file.sizeBytes).toBe(1000);
  });

  test("a 10 MiB file streams in and is stored holding about the file once", async () => {
    const t = await startFilesBackend(driver);
    const { url } = await serveHttp(t.backend);
    const { result, heap } = await measureGrowth(() => streamUpload(url, t.tenant.bearer, { total: 10 * MiB, floodPart: "file", honestLength: true }));
    expect(result.status).toBe(201);
    expect(result.body.file).toMatchObject({ sizeBytes: 10 * MiB, mimeType: "text/plain" });
    expect(heap).toBeLessThan(HEAP_GROWTH_BOUND);
  });
});

describe("many uploads at once", () => {
  test("are all stored byte for byte although only a few are held in memory at a time", async () => {
    const t = await startFilesBackend(DRIVERS[0]);
    const files = Array.from({ length: 8 }, (_, i) => sample("png", 256 * 1024 + i));
    const replies = await Promise.all(files.map((data, i) => t.upload({ filename: `f${i}.png`, type: "image/png", data })));
    for (const [i, reply] of replies.entries()) {
      expect(reply.status, reply.text).toBe(201);
      const served = await t.fetchPublic(reply.body.file.url);
      expect(served.bytes.equals(files[i]!)).toBe(true);
    }
  });
});

describe("the multipart parser", () => {
  test("passes a 10 MiB part on chunk by chunk: at most a delimiter's worth held between chunks, none copied but at the seams", async () => {
    const delimiter = `\r\n--${BOUNDARY}`;
    const file = randomBytes(10 * MiB);
    // A near-delimiter across a chunk seam: all but its last byte, which does not match.
    const seamAt = 40 * 64 * 1024;
    file.write(delimiter.slice(0, -1) + "#", seamAt - 10, "latin1");
    const body = Buffer.from(multipart([{ filename: "big.bin", type: "application/octet-stream", data: file }]));
    const chunks = Array.from({ length: Math.ceil(body.length / (64 * 1024)) }, (_, i) => body.subarray(i * 64 * 1024, (i + 1) * 64 * 1024));

    let given = 0;
    let written = 0;
    let writing = false;
    let mostHeld = 0;
    const writes: Buffer[] = [];
    const source: BodyChunks = {
      async next() {
        expect(writing).toBe(false);
        mostHeld = Math.max(mostHeld, given - written);
        const chunk = chunks.shift() ?? null;
        given += chunk?.length ?? 0;
        return chunk;
      },
      discard() {},
    };
    const spool: Spool = {
      path: "(memory)",
      async write(bytes) {
        writing = true;
        writes.push(bytes);
        await new Promise((r) => setImmediate(r));
        written += bytes.length;
        writing = false;
      },
      async finish() {},
      async discard() {},
    };
    const headers = new Headers({ "content-type": `multipart/form-data; boundary=${BOUNDARY}` });
    const part = await readFilePart(source, headers, { maxFileBytes: 10 * MiB }, spool);

    expect({ size: part.size, sha256: part.sha256, filename: part.filename }).toEqual({
      size: file.length,
      sha256: createHash("sha256").update(file).digest("hex"),
      filename: "big.bin",
    });
    expect(Buffer.concat(writes).equals(file)).toBe(true);
    // Between chunks the parser keeps only the part headers before the file and a tail that may start a delimiter.
    expect(mostHeld).toBeLessThan(1024);
    // Written from the chunks as they arrived, except around the first boundary and the near-delimiter.
    const copied = writes.filter((w) => w.buffer !== body.buffer);
    expect(copied.length).toBeLessThan(8);
    expect(writes.length).toBeGreaterThan(150);
  });
});
