import { fail } from "../errors.ts";
import type { Core } from "../core.ts";
import type { FileRow } from "../db/files.ts";
import { contentDisposition, isInline } from "./policy.ts";

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

function toBuffer(raw: unknown): Buffer {
  if (Buffer.isBuffer(raw)) return raw;
  if (raw instanceof Uint8Array) return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  if (raw instanceof ArrayBuffer) return Buffer.from(raw);
  throw new Error("files: the storage driver returned a blob that is not bytes");
}

// Blobs read from storage are backed by plain ArrayBuffers; the DOM typing wants that said.
const asBody = (b: Buffer) => b as Uint8Array<ArrayBuffer>;

const etagOf = (f: FileRow) => `"${f.sha256}"`;

/**
 * The public answer for a stored file: the bytes under headers that keep a browser from
 * running them (nosniff, a sandboxing CSP, attachment unless allow-listed), cacheable for
 * ever, with ETag revalidation and single byte ranges.
 */
export async function servePublicFile(core: Core, id: string, headers: Headers): Promise<Response> {
  const file = await core.db.files.findPublic(id);
  const raw = file ? await core.storage.getItemRaw(file.pathname) : null;
  if (!file || raw === null || raw === undefined) throw fail("not_found", "No such file: it was deleted or never existed.");
  const etag = etagOf(file);
  const out = new Headers({
    "content-type": /^text\/|^application\/json$/.test(file.mimeType) ? `${file.mimeType}; charset=utf-8` : file.mimeType,
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; sandbox",
    "content-disposition": contentDisposition(isInline(file.mimeType) ? "inline" : "attachment", file.originalFilename),
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
  const data = toBuffer(raw);
  const ifRange = headers.get("if-range");
  const range = ifRange && ifRange !== etag ? null : parseRange(headers.get("range"), data.length);
  if (range === "unsatisfiable") {
    throw fail("range_not_satisfiable", `The requested range is outside the file (${data.length} bytes).`, { "content-range": `bytes */${data.length}` });
  }
  if (range) {
    out.set("content-range", `bytes ${range.start}-${range.end}/${data.length}`);
    out.set("content-length", String(range.end - range.start + 1));
    return new Response(asBody(data.subarray(range.start, range.end + 1)), { status: 206, headers: out });
  }
  out.set("content-length", String(data.length));
  return new Response(asBody(data), { status: 200, headers: out });
}
