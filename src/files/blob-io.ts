import { createReadStream, createWriteStream, type WriteStream } from "node:fs";
import { copyFile, mkdir, readFile, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { Readable } from "node:stream";
import type { Core } from "../core.ts";
import { newToken } from "../crypto/random.ts";

/**
 * Blob bytes move between the network and storage in small chunks wherever the driver
 * allows: the default storage (the fs driver under the data directory) is read and written
 * as files directly, so a reader or an upload holds one chunk, not the file. A driver passed
 * as `storage` (S3, or any wrapper) is used through unstorage, which has no stream API in
 * 1.x: it gets and takes whole buffers (docs/files.md says so).
 */

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
      if (!out.write(bytes)) await new Promise<void>((ok) => out.once("drain", ok).once("error", () => ok()));
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

/** Moves a spooled upload into storage under `key`: a rename for the fs driver, a buffer for others. */
export async function storeSpool(core: Core, spool: Spool, key: string): Promise<void> {
  const path = fsPathOf(core, key);
  if (path === null) {
    await core.storage.setItemRaw(key, await readFile(spool.path));
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

export { readFile as readSpool };
