/**
 * What tenantd refuses to store and how it names and presents what it stores: refused
 * types and extensions, the inline allow-list, file name cleaning, content-disposition.
 */

/** Longest stored file name, in Unicode characters (code points); longer names are cut, keeping the extension. */
export const MAX_FILENAME_CHARS = 255;

// Types a browser renders as a document or runs as script.
const REFUSED_TYPES = new Set([
  "text/html",
  "application/xhtml+xml",
  "image/svg+xml",
  "text/javascript",
  "application/javascript",
  "application/x-javascript",
  "text/x-javascript",
  "text/ecmascript",
  "application/ecmascript",
  "text/jscript",
  "text/livescript",
  "text/jsx",
  "application/xml",
  "text/xml",
  "text/xsl",
  "application/xslt+xml",
  "application/x-shockwave-flash",
  "application/vnd.adobe.flash.movie",
  "text/x-component",
  "application/hta",
  "message/rfc822",
  "multipart/related",
  "application/x-mimearchive",
  "multipart/x-mixed-replace",
  "text/cache-manifest",
]);

const REFUSED_EXTENSIONS = new Set([
  ".html", ".htm", ".shtml", ".xhtml", ".xht", ".mht", ".mhtml", ".svg", ".svgz",
  ".js", ".mjs", ".cjs", ".jsx", ".xml", ".xsl", ".xslt", ".rss", ".atom", ".mml",
  ".swf", ".hta", ".htc", ".xbl", ".appcache",
]);

/** Why a declared content-type is refused, or undefined. Any `+xml` type (MathML, RSS, …) is XML. */
export function refusedDeclaredType(type: string | null): string | undefined {
  if (!type) return undefined;
  if (REFUSED_TYPES.has(type) || type.endsWith("+xml")) return `the type ${type}`;
  return undefined;
}

/** Lower-cased extension with its dot (`.png`), or null. */
export function extensionOf(name: string | null): string | null {
  if (!name) return null;
  const dot = name.lastIndexOf(".");
  return dot > 0 && dot < name.length - 1 ? name.slice(dot).toLowerCase() : null;
}

export function refusedExtension(name: string | null): string | undefined {
  const ext = extensionOf(name);
  return ext && REFUSED_EXTENSIONS.has(ext) ? `the extension ${ext}` : undefined;
}

/**
 * Shown in place (`inline`): raster images, audio and video. Everything else downloads. PDF
 * is inline only from a separate CDN origin: a PDF viewer runs scripts and forms, which
 * must never run on the API's own origin.
 */
const INLINE_TYPES = new Set([
  "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp", "image/x-icon",
  "audio/mpeg", "audio/ogg", "audio/wav", "audio/flac", "audio/mp4", "audio/aac",
  "video/mp4", "video/webm", "video/ogg", "video/quicktime",
]);

export const isInline = (mimeType: string, separateOrigin = false) => INLINE_TYPES.has(mimeType) || (separateOrigin && mimeType === "application/pdf");

// Control characters (C0, DEL, C1), bidi overrides and isolates, BOM / zero-width no-break space.
const UNSAFE_CHARS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

/**
 * The name as stored: NFC, without control or bidi-override characters, without any
 * directory part (`../../x.png` is `x.png`, `C:\a\b.txt` is `b.txt`), without trailing dots
 * and spaces, at most MAX_FILENAME_CHARS characters with the extension kept. Null when
 * nothing usable is left. It is only ever shown, never used as a storage key.
 */
export function cleanFilename(raw: string | null): string | null {
  if (raw === null) return null;
  let name = raw.normalize("NFC").replace(UNSAFE_CHARS, "");
  name = name.slice(Math.max(name.lastIndexOf("/"), name.lastIndexOf("\\")) + 1);
  name = name.trim().replace(/[. ]+$/, "");
  if (name === "") return null;
  const chars = Array.from(name);
  if (chars.length <= MAX_FILENAME_CHARS) return name;
  const ext = extensionOf(name);
  const extChars = ext && Array.from(ext).length <= 16 ? Array.from(name.slice(name.length - ext.length)) : [];
  return chars.slice(0, MAX_FILENAME_CHARS - extChars.length).join("").trimEnd() + extChars.join("");
}

/** RFC 5987 value characters (attr-char); everything else is percent-encoded UTF-8. */
function encodeExtValue(s: string): string {
  return encodeURIComponent(s).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * `content-disposition` by RFC 6266: an ASCII `filename` fallback (other characters become
 * `_`, quotes and backslashes escaped) and the exact name as `filename*=UTF-8''…`.
 */
export function contentDisposition(kind: "inline" | "attachment", name: string | null): string {
  if (!name) return kind;
  const fallback = name.replace(/[^\x20-\x7e]|%/g, "_").replace(/["\\]/g, "\\$&");
  return `${kind}; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(name)}`;
}

const EXTENSION_FOR_TYPE: Record<string, string> = {
  "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp", "image/avif": ".avif",
  "image/heic": ".heic", "image/heif": ".heif", "image/bmp": ".bmp", "image/x-icon": ".ico", "image/tiff": ".tif",
  "application/pdf": ".pdf", "audio/mpeg": ".mp3", "audio/aac": ".aac", "audio/ogg": ".ogg", "audio/wav": ".wav",
  "audio/flac": ".flac", "audio/mp4": ".m4a", "audio/midi": ".mid", "video/mp4": ".mp4", "video/quicktime": ".mov",
  "video/webm": ".webm", "video/x-matroska": ".mkv", "video/ogg": ".ogv", "video/3gpp": ".3gp", "video/x-msvideo": ".avi",
  "application/zip": ".zip", "application/gzip": ".gz", "text/plain": ".txt", "application/json": ".json", "text/csv": ".csv",
  "text/markdown": ".md",
};

/** An extension for a stored type, for the server-built storage key and unnamed files' URLs. */
export const extensionFor = (mimeType: string) => EXTENSION_FOR_TYPE[mimeType] ?? "";
