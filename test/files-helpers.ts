import { join } from "node:path";
import type { Driver } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import memoryDriver from "unstorage/drivers/memory";
import { startBackend, signupTenant, type Reply, type TestBackend, type TestTenant } from "./_helpers.ts";
import { s3StorageDriver } from "../src/files/storage.ts";
import type { S3Options } from "../src/files/s3.ts";
import { s3Storage } from "./_s3.ts";

/**
 * The storage drivers every files test runs on: the default fs driver (no `storage` option)
 * the memory driver passed as `storage`, through the same code path, and S3 (the run's local
 * S3 server, a new bucket per backend). `explicit` builds the same driver as an object, for
 * tests that wrap it.
 */
export const DRIVERS = [
  { name: "fs", storage: (): Driver | undefined => undefined, explicit: (dataDir: string) => fsDriver({ base: join(dataDir, "files") }) },
  { name: "memory", storage: (): Driver | undefined => memoryDriver(), explicit: () => memoryDriver() },
  { name: "s3", storage: () => s3Storage(), explicit: async () => s3StorageDriver((await s3Storage()) as S3Options) },
] as const;

export type DriverCase = (typeof DRIVERS)[number];

export interface Part {
  name?: string;
  filename?: string;
  /** the raw filename parameter, already quoted/escaped as it should appear */
  rawDisposition?: string;
  type?: string;
  data: Buffer | string;
}

export const BOUNDARY = "----tenantdTestBoundary7MA4YWxkTrZu0gW";

/** A multipart/form-data body, as a browser builds it (", CR, LF in names as %22, %0D, %0A). */
export function multipart(parts: Part[], boundary = BOUNDARY): Uint8Array<ArrayBuffer> {
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const filename = p.filename === undefined ? "" : `; filename="${p.filename.replace(/"/g, "%22").replace(/\r/g, "%0D").replace(/\n/g, "%0A")}"`;
    const disposition = p.rawDisposition ?? `form-data; name="${p.name ?? "file"}"${filename}`;
    const type = p.type ? `\r\ncontent-type: ${p.type}` : "";
    chunks.push(Buffer.from(`--${boundary}\r\ncontent-disposition: ${disposition}${type}\r\n\r\n`, "utf8"), Buffer.from(p.data), Buffer.from("\r\n"));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return new Uint8Array(Buffer.concat(chunks));
}

export interface FilesBackend extends TestBackend {
  tenant: TestTenant;
  upload(part: Omit<Part, "name"> & { name?: string }, as?: TestTenant): Promise<Reply>;
  uploadRaw(body: BodyInit, contentType: string | null, as?: TestTenant): Promise<Reply>;
  /** GET of a public file URL without any credentials; the body as bytes. */
  fetchPublic(url: string, headers?: Record<string, string>): Promise<{ status: number; headers: Headers; bytes: Buffer; json: any }>;
  /** every key the storage holds */
  storedKeys(): Promise<string[]>;
}

export async function startFilesBackend(driver: DriverCase, config: Parameters<typeof startBackend>[0] = {}): Promise<FilesBackend> {
  const t = await startBackend({ storage: await driver.storage(), ...config });
  const tenant = await signupTenant(t);
  const uploadRaw = (body: BodyInit, contentType: string | null, as = tenant) =>
    t.request("POST", "/api/v1/files/upload", { bearer: as.bearer, raw: body, headers: contentType ? { "content-type": contentType } : {} });
  return {
    ...t,
    tenant,
    uploadRaw,
    upload: (part, as) => uploadRaw(multipart([part]), `multipart/form-data; boundary=${BOUNDARY}`, as),
    async fetchPublic(url, headers = {}) {
      const u = new URL(url);
      const res = await t.backend.fetch(new Request(`http://localhost${u.pathname}`, { headers }));
      const bytes = Buffer.from(await res.arrayBuffer());
      let json: unknown;
      try {
        json = JSON.parse(bytes.toString("utf8"));
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, bytes, json };
    },
    storedKeys: () => t.backend.core.storage.getKeys(),
  };
}

/** A valid-looking file of a format: its magic bytes, then `size` bytes of filler. */
export function sample(kind: keyof typeof MAGIC, size = 2048): Buffer {
  const head = MAGIC[kind];
  const body = Buffer.alloc(Math.max(0, size - head.length));
  for (let i = 0; i < body.length; i++) body[i] = (i * 31 + 7) % 251;
  return Buffer.concat([head, body]);
}

const b = (...xs: (number | string)[]) => Buffer.concat(xs.map((x) => (typeof x === "string" ? Buffer.from(x, "latin1") : Buffer.from([x]))));

export const MAGIC = {
  png: b(0x89, "PNG\r\n\x1a\n"),
  jpeg: b(0xff, 0xd8, 0xff, 0xe0, "\0\x10JFIF\0"),
  gif: b("GIF89a"),
  webp: b("RIFF\x10\0\0\0WEBPVP8 "),
  avif: b("\0\0\0\x1cftypavif"),
  heic: b("\0\0\0\x18ftypheic"),
  bmp: b("BM\x10\0\0\0\0\0\0\0"),
  ico: b(0, 0, 1, 0, 1, 0, 16, 16),
  pdf: b("%PDF-1.7\n"),
  mp3: b("ID3\x04\0\0\0\0\0\0"),
  ogg: b("OggS\0\x02"),
  wav: b("RIFF\x24\0\0\0WAVEfmt "),
  flac: b("fLaC\0\0\0\x22"),
  mp4: b("\0\0\0\x20ftypisom"),
  mov: b("\0\0\0\x14ftypqt  "),
  webm: b(0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81, 0x01, 0x42, 0x82, 0x84, "webm"),
  zip: b("PK\x03\x04\x14\0"),
  gzip: b(0x1f, 0x8b, 0x08, 0),
  unknown: b(0x00, 0x01, 0x02, 0xfe, 0xfd, 0x00, 0x99),
} satisfies Record<string, Buffer>;
