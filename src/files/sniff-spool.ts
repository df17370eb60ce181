import { createReadStream } from "node:fs";
import { readSpool, readSpoolHead } from "./blob-io.ts";
import { MARKUP_SCAN_BYTES, sniff, type Sniffed } from "./sniff.ts";

/** Bytes read for the magic-number and markup checks; the larger part of a file is read only when it may be text. */
const SNIFF_HEAD_BYTES = Math.max(64 * 1024, MARKUP_SCAN_BYTES);

/** What `sniff` answers from the text heuristic (everything else it answers from the first bytes). */
const TEXT_VERDICTS = new Set(["application/octet-stream", "application/json", "text/plain", "text/csv", "text/tab-separated-values", "text/markdown"]);

/**
 * `sniff` of a spooled upload of `size` bytes, the same answer as `sniff` of the whole file,
 * without holding the file in memory: the magic number and markup live in the first bytes,
 * and the text test streams the file (for binary data it stops within the first chunk).
 * Only text that starts like JSON is read whole, since the JSON check parses it, inside
 * `whole` (which bounds how many files are held at once). Reading every upload whole here
 * was most of the RSS growth of 8 concurrent 10 MB uploads.
 */
export async function sniffSpool(path: string, size: number, extension: string | null, whole: <T>(task: () => Promise<T>) => Promise<T>): Promise<Sniffed> {
  const head = await readSpoolHead(path, SNIFF_HEAD_BYTES);
  const first = sniff(head, extension);
  if (size <= head.length || "refused" in first || !TEXT_VERDICTS.has(first.mimeType)) return first;
  if (!(await isTextFile(path))) return { mimeType: "application/octet-stream" };
  if (startsLikeJson(head)) return whole(async () => sniff(await readSpool(path), extension));
  // Text that is not JSON is typed by its first bytes and the extension alone.
  return sniff(head.subarray(0, completeUtf8Length(head)), extension);
}

/** `sniff`'s precondition for parsing a text as JSON: `{` or `[` first, after whitespace, in the first 64 bytes. */
function startsLikeJson(head: Buffer): boolean {
  const first = head.toString("latin1", 0, 64).trimStart()[0];
  return first === "{" || first === "[";
}

/** The length of `b` without a UTF-8 sequence cut off at its end (b is the start of valid UTF-8). */
function completeUtf8Length(b: Buffer): number {
  for (let i = b.length - 1; i >= Math.max(0, b.length - 4); i--) {
    const byte = b[i]!;
    if (byte < 0x80) return b.length;
    if (byte >= 0xc0) return i + (byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2) <= b.length ? b.length : i;
  }
  return b.length;
}

const CONTROL = /[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f]/;

/** `sniff`'s text test (valid UTF-8 without control characters but tab, newlines, form feed and escape), chunk by chunk. */
async function isTextFile(path: string): Promise<boolean> {
  const utf8 = new TextDecoder("utf-8", { fatal: true });
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream) {
      // A sequence split across chunks waits in the decoder (stream: true) for its end.
      if (CONTROL.test(utf8.decode(chunk as Buffer, { stream: true }))) return false;
    }
    return !CONTROL.test(utf8.decode());
  } catch (e) {
    if (e instanceof TypeError) return false;
    throw e;
  } finally {
    stream.destroy();
  }
}
