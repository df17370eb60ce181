/**
 * Content sniffing: what the bytes are, whatever the client said. Magic numbers for the
 * common binary formats, markup detection in the first bytes, then a text heuristic.
 */

/** How far into the file markup is looked for. */
export const MARKUP_SCAN_BYTES = 4096;

export type Sniffed = { mimeType: string } | { refused: string };

const ascii = (b: Buffer, at: number, s: string) => b.length >= at + s.length && b.toString("latin1", at, at + s.length) === s;
const bytes = (b: Buffer, at: number, ...xs: number[]) => b.length >= at + xs.length && xs.every((x, i) => b[at + i] === x);

/** ISO base media (`ftyp`) brands: AVIF/HEIF stills, QuickTime, MPEG-4 audio and video. */
function ftypType(b: Buffer): string {
  const brand = b.toString("latin1", 8, 12);
  if (brand === "avif" || brand === "avis") return "image/avif";
  if (["heic", "heix", "hevc", "hevx", "heim", "heis"].includes(brand)) return "image/heic";
  if (brand === "mif1" || brand === "msf1") return "image/heif";
  if (brand === "qt  ") return "video/quicktime";
  if (brand === "M4A " || brand === "M4B ") return "audio/mp4";
  if (brand.startsWith("3g")) return "video/3gpp";
  return "video/mp4";
}

/** The type its magic number proves, or undefined. */
function magicType(b: Buffer): Sniffed | undefined {
  if (bytes(b, 0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return { mimeType: "image/png" };
  if (bytes(b, 0, 0xff, 0xd8, 0xff)) return { mimeType: "image/jpeg" };
  if (ascii(b, 0, "GIF87a") || ascii(b, 0, "GIF89a")) return { mimeType: "image/gif" };
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "WEBP")) return { mimeType: "image/webp" };
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "WAVE")) return { mimeType: "audio/wav" };
  if (ascii(b, 0, "RIFF") && ascii(b, 8, "AVI ")) return { mimeType: "video/x-msvideo" };
  if (ascii(b, 4, "ftyp")) return { mimeType: ftypType(b) };
  if (ascii(b, 0, "BM") && bytes(b, 6, 0, 0, 0, 0)) return { mimeType: "image/bmp" };
  if (bytes(b, 0, 0, 0, 1, 0) && b.length > 6 && b[4]! + b[5]! > 0) return { mimeType: "image/x-icon" };
  if (ascii(b, 0, "II*\0") || ascii(b, 0, "MM\0*")) return { mimeType: "image/tiff" };
  if (ascii(b, 0, "%PDF-")) return { mimeType: "application/pdf" };
  if (ascii(b, 0, "ID3")) return { mimeType: "audio/mpeg" };
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xf6) === 0xf0) return { mimeType: "audio/aac" };
  if (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0 && (b[1]! & 0x06) !== 0) return { mimeType: "audio/mpeg" };
  if (ascii(b, 0, "OggS")) return { mimeType: b.subarray(0, 64).includes("\x80theora", 0, "latin1") ? "video/ogg" : "audio/ogg" };
  if (ascii(b, 0, "fLaC")) return { mimeType: "audio/flac" };
  if (ascii(b, 0, "MThd")) return { mimeType: "audio/midi" };
  if (bytes(b, 0, 0x1a, 0x45, 0xdf, 0xa3)) {
    return { mimeType: b.subarray(0, 64).includes("webm", 0, "latin1") ? "video/webm" : "video/x-matroska" };
  }
  if (ascii(b, 0, "PK\x03\x04") || ascii(b, 0, "PK\x05\x06")) return { mimeType: "application/zip" };
  if (bytes(b, 0, 0x1f, 0x8b)) return { mimeType: "application/gzip" };
  if (bytes(b, 0, 0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c)) return { mimeType: "application/x-7z-compressed" };
  if (ascii(b, 0, "Rar!\x1a\x07")) return { mimeType: "application/vnd.rar" };
  if (ascii(b, 0, "wOFF")) return { mimeType: "font/woff" };
  if (ascii(b, 0, "wOF2")) return { mimeType: "font/woff2" };
  if (ascii(b, 0, "8BPS")) return { mimeType: "image/vnd.adobe.photoshop" };
  if (ascii(b, 0, "%!PS")) return { mimeType: "application/postscript" };
  if (bytes(b, 0, 0x00, 0x61, 0x73, 0x6d)) return { mimeType: "application/wasm" };
  // Flash runs in the browser (where a plugin still exists); refuse it like script.
  if (ascii(b, 0, "FWS") || ascii(b, 0, "CWS") || ascii(b, 0, "ZWS")) return { refused: "a Flash (SWF) file" };
  return undefined;
}

/** The first bytes as text a browser would read, lower-cased. */
function headText(b: Buffer): string {
  const head = b.subarray(0, MARKUP_SCAN_BYTES);
  if (bytes(head, 0, 0xff, 0xfe)) return head.subarray(2).toString("utf16le").toLowerCase();
  if (bytes(head, 0, 0xfe, 0xff)) return Buffer.from(head.subarray(2)).swap16().toString("utf16le").toLowerCase();
  return head.toString("latin1").toLowerCase();
}

// Tags that make a browser build a document or run script, wherever they appear in the head.
const ACTIVE_TAG = /<(?:svg|html|head|body|script|iframe|frame|frameset|object|embed|applet|meta|link|style|base|form|math)[\s/>]|<!doctype/;
// Markup at the very start (after BOM and whitespace): XML, comments, any element.
const LEADING_MARKUP = /^(?:\u00ef\u00bb\u00bf|\ufeff)?[\s\u0000]*<(?:\?xml|!--|![a-z[]|[a-z])/;

/** Names the markup found in the first bytes, or undefined. */
export function findMarkup(b: Buffer): string | undefined {
  const text = headText(b);
  const tag = ACTIVE_TAG.exec(text);
  if (tag) return `markup (${tag[0].replace(/[\s/>]$/, "")}>)`;
  if (LEADING_MARKUP.test(text)) return "markup (the content starts with a tag)";
  return undefined;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Text: valid UTF-8 without control characters other than tab, newlines, form feed and escape. */
function isText(b: Buffer): boolean {
  try {
    const text = utf8.decode(b);
    return !/[\u0000-\u0008\u000e-\u001a\u001c-\u001f\u007f]/.test(text);
  } catch {
    return false;
  }
}

function looksLikeJson(b: Buffer): boolean {
  const first = b.toString("latin1", 0, 64).trimStart()[0];
  if (first !== "{" && first !== "[") return false;
  try {
    JSON.parse(b.toString("utf8"));
    return true;
  } catch {
    return false;
  }
}

/** Text types named by extension once the content is known to be plain text. */
const TEXT_BY_EXTENSION: Record<string, string> = {
  ".csv": "text/csv",
  ".tsv": "text/tab-separated-values",
  ".md": "text/markdown",
  ".markdown": "text/markdown",
};

/** ZIP containers named by extension (the bytes say only "zip"). */
const ZIP_BY_EXTENSION: Record<string, string> = {
  ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
  ".odt": "application/vnd.oasis.opendocument.text",
  ".ods": "application/vnd.oasis.opendocument.spreadsheet",
  ".epub": "application/epub+zip",
};

/**
 * The stored type of `data`: refused when the bytes are markup or Flash, else the type the
 * bytes prove, else text or JSON by heuristic, else `application/octet-stream`. The
 * extension only picks between types the bytes already allow (csv vs plain text, docx vs zip).
 */
export function sniff(data: Buffer, extension: string | null): Sniffed {
  const magic = magicType(data);
  if (magic && "refused" in magic) return magic;
  const markup = findMarkup(data);
  if (markup) return { refused: markup };
  if (magic) {
    if (magic.mimeType === "application/zip" && extension && ZIP_BY_EXTENSION[extension]) return { mimeType: ZIP_BY_EXTENSION[extension] };
    return magic;
  }
  if (data.length > 0 && isText(data)) {
    if (looksLikeJson(data)) return { mimeType: "application/json" };
    return { mimeType: (extension && TEXT_BY_EXTENSION[extension]) || "text/plain" };
  }
  return { mimeType: "application/octet-stream" };
}
