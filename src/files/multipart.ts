import { createHash } from "node:crypto";
import { fail } from "../errors.ts";
import type { Spool } from "./blob-io.ts";
import type { BodyChunks } from "../http/body-chunks.ts";

/** Bytes a multipart body may carry beyond the file itself: boundaries, part headers, small fields. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/**
 * After refusing a body, this much more of it is read and dropped before the connection is
 * cut: a client that keeps sending while the 413 travels back then still reads the answer
 * (cutting at once makes its next write fail with EPIPE before it sees the status).
 */
export const DISCARD_AFTER_REFUSAL_BYTES = 64 * 1024 * 1024;
/** Largest header block of one part. */
const MAX_PART_HEADER_BYTES = 16 * 1024;
const HEADER_END = Buffer.from("\r\n\r\n");
const CRLF = Buffer.from("\r\n");

export interface FilePart {
  /** the `filename` the client sent, undecoded beyond the multipart rules; null when absent */
  filename: string | null;
  /** the part's own content-type, lower-cased without parameters; null when absent */
  contentType: string | null;
  /** bytes written to the spool */
  size: number;
  sha256: string;
}

export interface MultipartLimits {
  /** the part named `file` may hold at most this many bytes */
  maxFileBytes: number;
}

interface Part {
  isFile: boolean;
  filename: string | null;
  contentType: string | null;
}

interface FileAccumulator {
  part: Part;
  /** bytes parsed but not yet written to the spool */
  pending: Buffer[];
  size: number;
  hash: ReturnType<typeof createHash>;
}

/** The boundary of a `multipart/form-data` content-type; 415 for any other type. */
export function multipartBoundary(contentType: string | null): string {
  const type = contentType?.split(";")[0]?.trim().toLowerCase();
  if (type !== "multipart/form-data") {
    throw fail("unsupported_media_type", `Send the upload as multipart/form-data with a part named "file" (got ${type || "no content-type"}).`);
  }
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))(?:\s*;|\s*$)/i.exec(contentType!);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw fail("invalid_request", "The multipart/form-data content-type has no valid boundary parameter (1-70 characters).");
  return boundary;
}

/** Splits `a=1; b="x \"y\""` into lower-cased names and unquoted values. */
function headerParams(value: string): Map<string, string> {
  const params = new Map<string, string>();
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g;
  for (const m of value.matchAll(re)) {
    // Only \" and \\ are unescaped: old browsers send Windows paths with bare backslashes.
    const raw = m[2] !== undefined ? m[2].replace(/\\(["\\])/g, "$1") : m[3]!.trim();
    params.set(m[1]!.toLowerCase(), raw);
  }
  return params;
}

/** `UTF-8''caf%C3%A9.png` (RFC 5987), or undefined when it is not that. */
function extendedValue(value: string | undefined): string | undefined {
  const m = value && /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!m) return undefined;
  try {
    return decodeURIComponent(m[1]!);
  } catch {
    return undefined;
  }
}

function parsePartHeaders(block: string): Part {
  let disposition = "";
  let contentType: string | null = null;
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "content-disposition") disposition = value;
    else if (name === "content-type") contentType = value.split(";")[0]!.trim().toLowerCase() || null;
  }
  if (!/^form-data\s*(;|$)/i.test(disposition)) {
    throw fail("invalid_request", "Every multipart part needs a content-disposition: form-data header.");
  }
  const params = headerParams(disposition);
  // Browsers escape ", CR and LF in filename as %22, %0D, %0A (WHATWG multipart/form-data).
  const plain = params.get("filename")?.replace(/%(22|0d|0a)/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
  const filename = extendedValue(params.get("filename*")) ?? plain ?? null;
  return { isFile: params.get("name") === "file", filename, contentType };
}

/**
 * Reads a `multipart/form-data` body as it streams and writes only the part named `file` to
 * `spool` (a temp file), refusing it with 413 as soon as it passes `maxFileBytes` (and the
 * whole body once it passes that plus a small overhead): memory stays at one network chunk
 * whatever the file size. Other parts are read and dropped. A body that stalls is refused
 * with 408 by `body`.
 */
export async function readFilePart(
  body: BodyChunks | null,
  headers: Headers,
  limits: MultipartLimits,
  spool: Spool,
): Promise<FilePart> {
  const boundary = multipartBoundary(headers.get("content-type"));
  const maxBodyBytes = limits.maxFileBytes + MULTIPART_OVERHEAD_BYTES;
  const tooLarge = () => fail("payload_too_large", `The file is larger than the ${limits.maxFileBytes}-byte limit.`);
  const declared = Number(headers.get("content-length") ?? NaN);
  if (declared > maxBodyBytes) {
    body?.discard(DISCARD_AFTER_REFUSAL_BYTES);
    throw tooLarge();
  }
  if (!body) throw fail("invalid_request", 'The request has no body: send a multipart/form-data part named "file".');

  const delimiter = Buffer.from(`\r\n--${boundary}`);
  // The first boundary may open the body without a CRLF before it.
  let buf: Buffer = Buffer.from(CRLF);
  let state = "preamble" as "preamble" | "boundary" | "headers" | "body" | "done";
  let part: Part | null = null;
  let file: FileAccumulator | null = null;
  let fileDone = false;
  let total = 0;

  const emit = (bytes: Buffer) => {
    if (state !== "body" || !part?.isFile || !file || bytes.length === 0) return;
    file.size += bytes.length;
    if (file.size > limits.maxFileBytes) throw tooLarge();
    file.pending.push(bytes);
    file.hash.update(bytes);
  };

  const step = (): boolean => {
    switch (state) {
      case "preamble":
      case "body": {
        const at = buf.indexOf(delimiter);
        if (at === -1) {
          // Keep a tail that may be the start of a delimiter split across chunks.
          const keep = Math.min(buf.length, delimiter.length - 1);
          emit(buf.subarray(0, buf.length - keep));
          buf = buf.subarray(buf.length - keep);
          return false;
        }
        emit(buf.subarray(0, at));
        if (state === "body" && part?.isFile) fileDone = true;
        buf = buf.subarray(at + delimiter.length);
        state = "boundary";
        return true;
      }
      case "boundary": {
        if (buf.length < 2) return false;
        if (buf[0] === 0x2d && buf[1] === 0x2d) {
          state = "done";
          return false;
        }
        const eol = buf.indexOf(CRLF);
        if (eol === -1) {
          if (buf.length > 256) throw fail("invalid_request", "The multipart body is malformed: a boundary line does not end.");
          return false;
        }
        if (!/^[ \t]*$/.test(buf.subarray(0, eol).toString("latin1"))) {
          throw fail("invalid_request", "The multipart body is malformed: text follows a boundary on its line.");
        }
        buf = buf.subarray(eol + 2);
        state = "headers";
        return true;
      }
      case "headers": {
        const end = buf.subarray(0, 2).equals(CRLF) ? -2 : buf.indexOf(HEADER_END);
        if (end === -1) {
          if (buf.length > MAX_PART_HEADER_BYTES) throw fail("invalid_request", `A multipart part has more than ${MAX_PART_HEADER_BYTES} bytes of headers.`);
          return false;
        }
        part = parsePartHeaders(end < 0 ? "" : buf.subarray(0, end).toString("utf8"));
        if (part.isFile) {
          if (file) throw fail("invalid_request", 'Send exactly one part named "file" per upload.');
          file = { part, pending: [], size: 0, hash: createHash("sha256") };
        }
        buf = buf.subarray(end < 0 ? 2 : end + HEADER_END.length);
        state = "body";
        return true;
      }
      case "done":
        // The epilogue is ignored.
        buf = buf.subarray(buf.length);
        return false;
    }
  };

  /**
   * Joins a new chunk to what is left of the last one. Inside a part, what is left is only a
   * tail shorter than the delimiter; unless the delimiter starts in it, the tail is emitted
   * and the chunk is taken as it is, instead of copying every chunk into a new buffer.
   */
  const append = (chunk: Buffer) => {
    if (buf.length === 0) return void (buf = chunk);
    const inPart = state === "body" || state === "preamble";
    if (inPart && buf.length < delimiter.length && chunk.length >= delimiter.length) {
      // A delimiter starting in the tail ends within the chunk's first delimiter.length - 1 bytes.
      const seam = Buffer.concat([buf, chunk.subarray(0, delimiter.length - 1)]);
      if (seam.indexOf(delimiter) === -1) {
        emit(buf);
        buf = chunk;
        return;
      }
    }
    buf = Buffer.concat([buf, chunk]);
  };

  try {
    for (;;) {
      const value = await body.next();
      if (value === null) break;
      total += value.byteLength;
      if (total > maxBodyBytes) throw tooLarge();
      append(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      while (step());
      const written = file as FileAccumulator | null;
      // Waiting on the disk here holds the sender back through TCP instead of growing the heap.
      if (written) for (const bytes of written.pending.splice(0)) await spool.write(bytes);
    }
  } catch (e) {
    body.discard(DISCARD_AFTER_REFUSAL_BYTES);
    throw e;
  }
  if (state !== "done") throw fail("invalid_request", "The multipart body ended before its closing boundary.");
  const found = file as FileAccumulator | null;
  if (!found || !fileDone) throw fail("invalid_request", 'The upload has no part named "file": send the file as the multipart part "file".');
  await spool.finish();
  return {
    filename: found.part.filename,
    contentType: found.part.contentType,
    size: found.size,
    sha256: found.hash.digest("hex"),
  };
}
