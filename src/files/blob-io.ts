import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { copyFile, mkdir, readFile, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import type { Core } from "../core.ts";
import { newToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { s3Of } from "./storage.ts";

/**
 * Blob bytes move between the network and storage in small chunks wherever the driver
 * allows: the default storage (the fs driver under the data directory) is read and written
 * as files directly, so a reader or an upload holds one chunk, not the file; so is an S3
 * bucket configured with `storage: { driver: "s3", … }` (ranged GETs, a PUT streamed from the
 * spooled upload). A driver object passed as `storage` is used through unstorage, which has
 * no stream API in 1.x: it gets and takes whole buffers (docs/files.md says so).
 */

/** A storage failure as the person using the API sees it: 503, try again; the details go to the log. */
function storageDown(core: Core, what: string, key: string, e: unknown): Error {
  core.log.error(`files: storage ${what} failed`, { pathname: key, error: String(e) });
  return fail("unavailable", `File storage is unavailable right now (the ${what} failed); try again later.`);
}

/** Where the default fs storage keeps `key`, or null when a driver from the config holds it. */
export function fsPathOf(core: Core, key: string): string | null {
  if (core.config.storage !== undefined) return null;
  const { driver, base } = core.storage.getMount(key);
  const options = driver.options as { base?: unknown } | undefined;
  if (driver.name !== "fs" || typeof options?.base !== "string") return null;
  // unstorage keys use ":" as the separator; the fs driver maps it to "/".
  const relative = key.slice(base.length).replace(/\//g, ":").replace(/^:+|:+$/g, "").replace(/:/g, "/");
  return join(resolve(options.base), relative);
}

/** Bytes `start..end` (inclusive) of a stored blob as a web stream, or null when it is gone. */
export async function openBlobStream(core: Core, key: string, range: { start: number; end: number } | null): Promise<ReadableStream<Uint8Array> | null> {
  const path = fsPathOf(core, key);
  if (path !== null) {
    const stream = createReadStream(path, { start: range?.start, end: range?.end, highWaterMark: 64 * 1024 });
    try {
      await new Promise<void>((ok, ko) => stream.once("open", () => ok()).once("error", ko));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
    return Readable.toWeb(stream) as ReadableStream<Uint8Array>;
  }
  const s3 = s3Of(core.storage);
  if (s3) {
    let res: Response | null;
    try {
      res = await s3.get(key, range);
    } catch (e) {
      throw storageDown(core, "read", key, e);
    }
    if (!res?.body) return null;
    // Exactly the bytes promised in content-length, whatever the server did with the Range
    // header (ignored it: 200 with the whole object; or answered a wider range).
    const from = range ? range.start - (res.status === 206 ? Number(/^bytes (\d+)-/.exec(res.headers.get("content-range") ?? "")?.[1] ?? range.start) : 0) : 0;
    return range ? res.body.pipeThrough(sliceBytes(from, range.end - range.start + 1)) : res.body;
  }
  const raw = await core.storage.getItemRaw(key);
  if (raw === null || raw === undefined) return null;
  const all = toBuffer(raw);
  const part = range ? all.subarray(range.start, range.end + 1) : all;
  return new ReadableStream({
    start(controller) {
      controller.enqueue(new Uint8Array(part));
      controller.close();
    },
  });
}

/** Drops the first `skip` bytes of a stream and ends it after `take` more. */
function sliceBytes(skip: number, take: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const start = Math.max(0, skip - seen);
      const end = Math.min(chunk.byteLength, skip + take - seen);
      seen += chunk.byteLength;
      if (end > start) controller.enqueue(chunk.subarray(start, end));
      if (seen >= skip + take) controller.terminate();
    },
  });
}

function toBuffer(raw: unknown): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw instanceof ArrayBuffer) return Buffer.from(raw);
  throw new Error("files: the storage driver returned a blob that is not bytes");
}

/** A temp file an upload streams into while it arrives; never held in memory whole. */
export interface Spool {
  path: string;
  write(bytes: Buffer): Promise<void>;
  /** Flushes and closes the file. */
  finish(): Promise<void>;
  /** Removes the file (after a refusal, or once stored). */
  discard(): Promise<void>;
}

export async function openSpool(core: Core): Promise<Spool> {
  const dir = join(core.config.dataDir, "tmp");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `upload-${newToken("up")}`);
  const out: WriteStream = createWriteStream(path, { mode: 0o600 });
  let failed: Error | null = null;
  out.on("error", (e) => (failed = e));
  return {
    path,
    async write(bytes) {
      if (failed) throw failed;
      if (!out.write(bytes)) await drained(out);
      if (failed) throw failed;
    },
    async finish() {
      await new Promise<void>((ok, ko) => out.end((e?: Error | null) => (e ? ko(e) : ok())));
      if (failed) throw failed;
    },
    async discard() {
      out.destroy();
      await rm(path, { force: true });
    },
  };
}

/** Resolves once `out` drains or fails, leaving no listener behind (one per wait piled up on the stream). */
function drained(out: WriteStream): Promise<void> {
  return new Promise((ok) => {
    const done = () => {
      out.off("drain", done);
      out.off("error", done);
      ok();
    };
    out.on("drain", done);
    out.on("error", done);
  });
}

/** The first `n` bytes of a spooled upload (for sniffing its type). */
export async function readSpoolHead(path: string, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of createReadStream(path, { start: 0, end: Math.max(0, n - 1) })) {
    chunks.push(c as Buffer);
    size += (c as Buffer).length;
  }
  return Buffer.concat(chunks, size);
}

/** What a spooled upload is: its size, its SHA-256 (hex) and the headers a bucket should serve it with. */
export interface SpoolFacts {
  size: number;
  sha256: string;
  headers: Record<string, string>;
}

/**
 * Moves a spooled upload into storage under `key`: a rename for the fs driver, a PUT streamed
 * from the file for S3, a buffer (taken inside `whole`, which bounds how many are held) for
 * any other driver.
 */
export async function storeSpool(core: Core, spool: Spool, key: string, facts: SpoolFacts, whole: <T>(task: () => Promise<T>) => Promise<T>): Promise<void> {
  const s3 = s3Of(core.storage);
  if (s3) {
    const body = facts.size === 0 ? new Uint8Array(0) : () => Readable.toWeb(createReadStream(spool.path, { highWaterMark: 64 * 1024 })) as ReadableStream<Uint8Array>;
    await s3.put(key, body, facts.size, facts.sha256, facts.headers);
    return;
  }
  const path = fsPathOf(core, key);
  if (path === null) {
    await whole(async () => core.storage.setItemRaw(key, await readFile(spool.path)));
    return;
  }
  await mkdir(dirname(path), { recursive: true });
  try {
    await rename(spool.path, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw e;
    await copyFile(spool.path, path);
  }
}

/** Removes a blob; a storage failure is 503 `unavailable`, so the delete can be retried. */
export async function removeBlob(core: Core, key: string): Promise<void> {
  try {
    await core.storage.removeItem(key);
  } catch (e) {
    throw storageDown(core, "delete", key, e);
  }
}

export { readFile as readSpool };
