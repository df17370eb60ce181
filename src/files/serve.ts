import { fail } from "../errors.ts";
import type { Core } from "../core.ts";
import type { FileRow } from "../db/types.ts";
import { contentDisposition, isInline } from "./policy.ts";
import { openBlobStream } from "./blob-io.ts";

/** Ids are never reused, so a file's bytes never change under its URL. */
const CACHE_CONTROL = "public, max-age=31536000, immutable";

export type ByteRange = { start: number; end: number };

/**
 * A single `bytes=` range of a `size`-byte file (RFC 9110): the range, "unsatisfiable", or
 * null to answer with the whole file (no header, a syntax we ignore, or several ranges).
 */
export function parseRange(header: string | null, size: number): ByteRange | "unsatisfiable" | null {
  const m = header && /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === "" ? size - 1 : Number(m[2]);
  if (start >= size) return "unsatisfiable";
  if (end < start) return null;
  return { start, end: Math.min(end, size - 1) };
}

const etagOf = (f: FileRow) => `"${f.sha256}"`;

/**
 * The headers that say what the bytes are and how long to keep them. tenantd answers with
 * them, and an S3 object carries them, so a CDN or bucket serving it directly
 * (`files.publicBaseUrl`) sends the same; `separateOrigin`: not served from the API's origin.
 */
export function blobHeaders(file: Pick<FileRow, "mimeType" | "originalFilename">, separateOrigin: boolean): Record<string, string> {
  return {
    "content-type": /^text\/|^application\/json$/.test(file.mimeType) ? `${file.mimeType}; charset=utf-8` : file.mimeType,
    "content-disposition": contentDisposition(isInline(file.mimeType, separateOrigin) ? "inline" : "attachment", file.originalFilename),
    "cache-control": CACHE_CONTROL,
  };
}

const gone = () => fail("not_found", "No such file: it was deleted or never existed.");

/**
 * The public answer for a stored file: the bytes under headers that keep a browser from
 * running them (nosniff, a sandboxing CSP, attachment unless allow-listed), cacheable for
 * ever, with ETag revalidation and single byte ranges. The bytes stream from storage a chunk
 * at a time (from the fs driver or S3, a range as a ranged read), so a slow reader holds a
 * small buffer, not the file.
 */
export async function servePublicFile(core: Core, id: string, headers: Headers, method = "GET"): Promise<Response> {
  const file = await core.db.files.findPublic(id);
  if (!file) throw gone();
  const size = file.sizeBytes;
  const etag = etagOf(file);
  const { "content-type": type, "content-disposition": disposition } = blobHeaders(file, core.config.files.cdnBaseUrl !== null);
  const out = new Headers({
    "content-type": type!,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "content-disposition": disposition!,
    "cache-control": CACHE_CONTROL,
    "cross-origin-resource-policy": "cross-origin",
    "last-modified": new Date(file.createdAt).toUTCString(),
    "accept-ranges": "bytes",
    etag,
  });
  const inm = headers.get("if-none-match");
  if (inm && inm.split(",").some((t) => t.trim() === etag || t.trim() === "*")) {
    return new Response(null, { status: 304, headers: out });
  }
  const ifRange = headers.get("if-range");
  const range = ifRange && ifRange !== etag ? null : parseRange(headers.get("range"), size);
  if (range === "unsatisfiable") {
    throw fail("range_not_satisfiable", `The requested range is outside the file (${size} bytes).`, { "content-range": `bytes */${size}` });
  }
  // HEAD gets the headers only: opening the blob would read it all (Node drops the bytes).
  const body = size === 0 || method === "HEAD" ? null : await openBlobStream(core, file.pathname, range);
  if (size > 0 && method !== "HEAD" && body === null) throw gone();
  if (range) {
    out.set("content-range", `bytes ${range.start}-${range.end}/${size}`);
    out.set("content-length", String(range.end - range.start + 1));
    return new Response(body, { status: 206, headers: out });
  }
  out.set("content-length", String(size));
  return new Response(body, { status: 200, headers: out });
}
