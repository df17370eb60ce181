import { createHash } from "node:crypto";
import type { Storage } from "unstorage";
import type { CopyEnd } from "../db/copy/end.ts";
import { COPY_TABLES } from "../db/copy/tables.ts";

export interface BlobReport {
  /** file rows (each names one blob) */
  files: number;
  copied: number;
  bytes: number;
  /** keys of the blobs the source storage does not hold (the target's, with `skip`) */
  missing: string[];
  /** blobs whose bytes in the target differ from the file row's size or SHA-256 */
  mismatched: string[];
  skipped: boolean;
  ok: boolean;
}

const FILES = COPY_TABLES.find((t) => t.name === "files")!;
const col = (name: string) => Object.keys(FILES.columns).indexOf(name);
const CONCURRENCY = 4;

function bytesOf(raw: unknown): Buffer | null {
  if (raw === null || raw === undefined) return null;
  if (Buffer.isBuffer(raw)) return raw;
  if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw instanceof ArrayBuffer) return Buffer.from(raw);
  if (typeof raw === "string") return Buffer.from(raw, "utf8");
  return null;
}

const sha256 = (b: Buffer) => createHash("sha256").update(b).digest("hex");

/**
 * Moves every file's blob (named by the files table's `pathname`) from the source storage to
 * the target's, then reads it back there and checks its size and SHA-256 against the row.
 * With `skip` (both sides share one storage) nothing moves: each blob is only looked for.
 */
export async function copyBlobs(
  files: CopyEnd,
  from: Storage,
  to: Storage,
  opts: { skip: boolean; batch: number; progress?: (done: number, total: number) => void },
): Promise<BlobReport> {
  const total = await files.count(FILES);
  const report: BlobReport = { files: total, copied: 0, bytes: 0, missing: [], mismatched: [], skipped: opts.skip, ok: true };
  let done = 0;
  let cursor: unknown[] | null = null;
  for (;;) {
    const page = await files.page(FILES, cursor as never, opts.batch);
    const rows = page.rows.map((r) => ({ key: r[col("pathname")] as string, size: Number(r[col("size_bytes")]), sha: r[col("sha256")] as string }));
    for (let i = 0; i < rows.length; i += CONCURRENCY) {
      await Promise.all(rows.slice(i, i + CONCURRENCY).map((f) => one(f)));
      done += Math.min(CONCURRENCY, rows.length - i);
      opts.progress?.(done, total);
    }
    if (page.rows.length < opts.batch) break;
    cursor = page.cursor;
  }
  report.ok = report.missing.length === 0 && report.mismatched.length === 0;
  return report;

  async function one(f: { key: string; size: number; sha: string }) {
    if (opts.skip) {
      if (!(await to.hasItem(f.key))) report.missing.push(f.key);
      return;
    }
    const bytes = bytesOf(await from.getItemRaw(f.key));
    if (!bytes) {
      report.missing.push(f.key);
      return;
    }
    await to.setItemRaw(f.key, bytes);
    const back = bytesOf(await to.getItemRaw(f.key));
    if (!back || back.length !== f.size || sha256(back) !== f.sha) {
      report.mismatched.push(f.key);
      return;
    }
    report.copied += 1;
    report.bytes += back.length;
  }
}
