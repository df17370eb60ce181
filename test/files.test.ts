import { existsSync } from "node:fs";
import { truncate, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { createTenantBackend, ConfigError } from "../src/index.ts";
import { sniffSpool } from "../src/files/sniff-spool.ts";
import { expectError, signupTenant, tempDir, opaqueBytes } from "./_helpers.ts";
import { BOUNDARY, DRIVERS, multipart, sample, startFilesBackend, type FilesBackend } from "./files-helpers.ts";

const MiB = 1024 * 1024;
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`;

describe.each(DRIVERS)("files on the $name driver", (driver) => {
  const start = (config = {}) => startFilesBackend(driver, config);

  test("upload, read, serve byte for byte, delete: the blob and the public URL are gone", async () => {
    const t = await start();
    const data = sample("png", 300_000);
    const up = await t.upload({ filename: "photo.png", type: "image/png", data });
    expect(up.status).toBe(201);
    const file = up.body.file;
    expect(file).toEqual({
      id: expect.stringMatching(/^file_[a-z2-7]{16}$/),
      url: `http://localhost:3000/api/v1/public/files/${file.id}/photo.png`,
      pathname: `${t.app.id}/${t.tenant.id}/${file.id}.png`,
      sizeBytes: data.length,
      mimeType: "image/png",
      originalFilename: "photo.png",
      createdAt: new Date(t.clock()).toISOString(),
    });
    if (driver.name === "fs") expect(existsSync(join(t.dataDir, "files", file.pathname))).toBe(true);

    const got = await t.request("GET", `/api/v1/files/${file.id}`, { bearer: t.tenant.bearer });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ file });

    const pub = await t.fetchPublic(file.url);
    expect(pub.status).toBe(200);
    expect(pub.bytes.equals(data)).toBe(true);
    expect(Object.fromEntries(["content-type", "content-length", "x-content-type-options", "content-security-policy", "content-disposition", "cache-control", "etag", "accept-ranges"].map((h) => [h, pub.headers.get(h)]))).toEqual({
      "content-type": "image/png",
      "content-length": String(data.length),
      "x-content-type-options": "nosniff",
      "content-security-policy": "default-src 'none'; sandbox",
      "content-disposition": `inline; filename="photo.png"; filename*=UTF-8''photo.png`,
      "cache-control": "public, max-age=31536000, immutable",
      etag: expect.stringMatching(/^"[0-9a-f]{64}"$/),
      "accept-ranges": "bytes",
    });
    const crossOrigin = await t.fetchPublic(file.url, { origin: "https://elsewhere.example" });
    expect({ status: crossOrigin.status, allow: crossOrigin.headers.get("access-control-allow-origin") }).toEqual({ status: 200, allow: "*" });
    const revalidated = await t.fetchPublic(file.url, { "if-none-match": pub.headers.get("etag")! });
    expect(revalidated.status).toBe(304);

    const del = await t.request("DELETE", `/api/v1/files/${file.id}`, { bearer: t.tenant.bearer });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    expect(await t.backend.core.storage.hasItem(file.pathname)).toBe(false);
    if (driver.name === "fs") expect(existsSync(join(t.dataDir, "files", file.pathname))).toBe(false);
    expectError(await t.request("GET", `/api/v1/files/${file.id}`, { bearer: t.tenant.bearer }), 404, "not_found");
    expectError(await t.request("DELETE", `/api/v1/files/${file.id}`, { bearer: t.tenant.bearer }), 404, "not_found");
    const gone = await t.fetchPublic(file.url);
    expect({ status: gone.status, error: gone.json?.error }).toEqual({ status: 404, error: "not_found" });
  });

  test("a file of exactly 10 MiB is stored; one byte more is 413 and nothing is stored", async () => {
    const t = await start();
    const data = opaqueBytes(10 * MiB);
    const ok = await t.upload({ filename: "big.bin", data });
    expect({ status: ok.status, text: ok.status === 201 ? "" : ok.text }).toEqual({ status: 201, text: "" });
    expect(ok.body.file.sizeBytes).toBe(10 * MiB);
    expect((await t.fetchPublic(ok.body.file.url)).bytes.equals(data)).toBe(true);

    const over = await t.upload({ filename: "bigger.bin", data: Buffer.concat([data, Buffer.from([1])]) });
    expectError(over, 413, "payload_too_large");
    expect(await t.storedKeys()).toHaveLength(1);
    expect((await t.backend.core.db.stats.appUsage(t.app.id, 0)).fileBytes).toBe(10 * MiB);
  });

  test("an honest content-length over the limit is refused before the body is read", async () => {
    const t = await start({ files: { maxBytes: 1000 } });
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(64 * 1024));
        if (pulled > 4000) controller.close();
      },
    });
    const res = await t.request("POST", "/api/v1/files/upload", {
      bearer: t.tenant.bearer,
      raw: body,
      headers: { "content-type": MULTIPART, "content-length": String(1024 * MiB) },
    });
    expectError(res, 413, "payload_too_large");
    expect(await t.storedKeys()).toEqual([]);
  });

  const svg = `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>`;
  test.each([
    { case: "SVG disguised as PNG", filename: "cat.png", type: "image/png", data: svg },
    { case: "SVG after a BOM, whitespace and an XML prolog, as .jpg", filename: "x.jpg", type: "image/jpeg", data: `\ufeff \n<?xml version="1.0"?>\n${svg}` },
    { case: "SVG declared as image/svg+xml", filename: "a.dat", type: "image/svg+xml", data: "plain words" },
    { case: "SVG by extension", filename: "logo.svg", type: "application/octet-stream", data: "plain words" },
    { case: "HTML as .txt", filename: "notes.txt", type: "text/plain", data: "<!DOCTYPE html><html><body><script>alert(1)</script></body></html>" },
    { case: "HTML tag after some text, as .txt", filename: "notes.txt", type: "text/plain", data: "Dear reader,\n\n<script>alert(1)</script>" },
    { case: "HTML in UTF-16 with a BOM", filename: "notes.txt", type: "text/plain", data: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("<html><script>alert(1)</script>", "utf16le")]) },
    { case: "HTML declared as text/html", filename: "a.txt", type: "text/html; charset=utf-8", data: "plain words" },
    { case: "HTML by extension", filename: "index.HTML", type: "application/octet-stream", data: "plain words" },
    { case: "JavaScript by extension", filename: "app.js", type: "text/plain", data: "alert(document.cookie)" },
    { case: "JavaScript module by extension", filename: "app.mjs", type: undefined, data: "export default 1" },
    { case: "JavaScript declared as application/javascript", filename: "notes.txt", type: "application/javascript", data: "alert(1)" },
    { case: "JavaScript declared as text/javascript", filename: undefined, type: "text/javascript", data: "alert(1)" },
    { case: "XHTML with a prolog, as .bin", filename: "page.bin", type: "application/octet-stream", data: `<?xml version="1.0"?>\n<html xmlns="http://www.w3.org/1999/xhtml"><body/></html>` },
    { case: "XHTML declared as application/xhtml+xml", filename: "a.dat", type: "application/xhtml+xml", data: "plain words" },
    { case: "XHTML by extension", filename: "page.xhtml", type: "application/octet-stream", data: "plain words" },
    { case: "XML content", filename: "data.txt", type: "text/plain", data: `<?xml version="1.0"?><note><to>x</to></note>` },
    { case: "an +xml type", filename: "feed.dat", type: "application/rss+xml", data: "plain words" },
    { case: "a PNG polyglot carrying <script> in its first bytes", filename: "p.png", type: "image/png", data: Buffer.concat([sample("png", 64), Buffer.from("<script>alert(1)</script>")]) },
    { case: "Flash", filename: "movie.bin", type: "application/octet-stream", data: Buffer.from("FWS\x0a\x00\x00\x00\x00", "latin1") },
    { case: "a path whose last segment is .html", filename: "dir/page.html", type: "text/plain", data: "plain words" },
  ])("$case is refused with 415 and not stored", async ({ filename, type, data }) => {
    const t = await start();
    expectError(await t.upload({ filename, type, data }), 415, "unsupported_media_type");
    expect(await t.storedKeys()).toEqual([]);
  });

  test("the stored type is the sniffed one, and only raster images, audio and video are inline (PDF downloads on the API origin)", async () => {
    const t = await start();
    const cases = [
      { name: "a.png", data: sample("png"), mime: "image/png", inline: true },
      { name: "a.jpg", data: sample("jpeg"), mime: "image/jpeg", inline: true },
      { name: "a.gif", data: sample("gif"), mime: "image/gif", inline: true },
      { name: "a.webp", data: sample("webp"), mime: "image/webp", inline: true },
      { name: "a.avif", data: sample("avif"), mime: "image/avif", inline: true },
      { name: "a.heic", data: sample("heic"), mime: "image/heic", inline: false },
      { name: "a.bmp", data: sample("bmp"), mime: "image/bmp", inline: true },
      { name: "a.ico", data: sample("ico"), mime: "image/x-icon", inline: true },
      { name: "a.pdf", data: sample("pdf"), mime: "application/pdf", inline: false },
      { name: "a.mp3", data: sample("mp3"), mime: "audio/mpeg", inline: true },
      { name: "a.ogg", data: sample("ogg"), mime: "audio/ogg", inline: true },
      { name: "a.wav", data: sample("wav"), mime: "audio/wav", inline: true },
      { name: "a.flac", data: sample("flac"), mime: "audio/flac", inline: true },
      { name: "a.mp4", data: sample("mp4"), mime: "video/mp4", inline: true },
      { name: "a.mov", data: sample("mov"), mime: "video/quicktime", inline: true },
      { name: "a.webm", data: sample("webm"), mime: "video/webm", inline: true },
      { name: "a.zip", data: sample("zip"), mime: "application/zip", inline: false },
      { name: "a.gz", data: sample("gzip"), mime: "application/gzip", inline: false },
      { name: "a.exe", data: sample("unknown"), mime: "application/octet-stream", inline: false },
      { name: "notes.txt", data: Buffer.from("Hello, wörld.\n1 < 2 and 3 > 2\n"), mime: "text/plain", inline: false },
      { name: "data.json", data: Buffer.from('{"a": [1, 2, "<b>"]}'), mime: "application/json", inline: false },
      { name: "table.csv", data: Buffer.from("a,b\n1,2\n"), mime: "text/csv", inline: false },
      // the client's word does not count: PNG bytes declared and named as a PDF are a PNG
      { name: "lies.pdf", type: "application/pdf", data: sample("png"), mime: "image/png", inline: true },
      // nor does a harmless declared type make script harmless: it is text, downloaded
      { name: "x.bin", type: "image/png", data: Buffer.from("just text"), mime: "text/plain", inline: false },
    ];
    for (const c of cases) {
      const up = await t.upload({ filename: c.name, type: c.type ?? "application/octet-stream", data: c.data });
      expect({ name: c.name, status: up.status, mime: up.body?.file?.mimeType }).toEqual({ name: c.name, status: 201, mime: c.mime });
      const pub = await t.fetchPublic(up.body.file.url);
      expect({
        name: c.name,
        type: pub.headers.get("content-type"),
        disposition: pub.headers.get("content-disposition")?.split(";")[0],
        same: pub.bytes.equals(c.data),
      }).toEqual({
        name: c.name,
        type: c.mime.startsWith("text/") || c.mime === "application/json" ? `${c.mime}; charset=utf-8` : c.mime,
        disposition: c.inline ? "inline" : "attachment",
        same: true,
      });
    }
  });

  test.each([
    { case: "parent directories", sent: "../../etc/passwd.txt", stored: "passwd.txt", disposition: `attachment; filename="passwd.txt"; filename*=UTF-8''passwd.txt` },
    { case: "Windows directories", sent: "..\\..\\boot.ini.txt", stored: "boot.ini.txt", disposition: `attachment; filename="boot.ini.txt"; filename*=UTF-8''boot.ini.txt` },
    { case: "nothing but dots", sent: "..", stored: null, disposition: "attachment", urlName: "file.txt" },
    { case: "unicode", sent: "résumé 日本.txt", stored: "résumé 日本.txt", disposition: `attachment; filename="r_sum_ __.txt"; filename*=UTF-8''r%C3%A9sum%C3%A9%20%E6%97%A5%E6%9C%AC.txt` },
    { case: "decomposed unicode, stored as NFC", sent: "cafe\u0301.txt", stored: "café.txt", disposition: `attachment; filename="caf_.txt"; filename*=UTF-8''caf%C3%A9.txt` },
    { case: "quotes and a backslash-free name", sent: `say "hi" it's (me).txt`, stored: `say "hi" it's (me).txt`, disposition: `attachment; filename="say \\"hi\\" it's (me).txt"; filename*=UTF-8''say%20%22hi%22%20it%27s%20%28me%29.txt` },
    { case: "control characters and a bidi override", sent: "evil\u0007\u202etxt.exe", stored: "eviltxt.exe", disposition: `attachment; filename="eviltxt.exe"; filename*=UTF-8''eviltxt.exe` },
    { case: "CR and LF", sent: "a\r\nb.txt", stored: "ab.txt", disposition: `attachment; filename="ab.txt"; filename*=UTF-8''ab.txt` },
    { case: "a percent sign", sent: "100%.txt", stored: "100%.txt", disposition: `attachment; filename="100_.txt"; filename*=UTF-8''100%25.txt` },
    { case: "a very long name, cut to 255 characters keeping the extension", sent: `${"é".repeat(1000)}.txt`, stored: `${"é".repeat(251)}.txt`, disposition: `attachment; filename="${"_".repeat(251)}.txt"; filename*=UTF-8''${"%C3%A9".repeat(251)}.txt` },
  ])("a file name with $case is stored safely and served with a correct content-disposition", async ({ sent, stored, disposition, urlName }) => {
    const t = await start();
    const up = await t.upload({ filename: sent, type: "text/plain", data: "hello" });
    expect(up.status).toBe(201);
    const file = up.body.file;
    expect(file.originalFilename).toBe(stored);
    expect(file.pathname).toBe(`${t.app.id}/${t.tenant.id}/${file.id}.txt`);
    expect(file.url).toBe(`http://localhost:3000/api/v1/public/files/${file.id}/${encodeURIComponent(urlName ?? stored!)}`);
    const pub = await t.fetchPublic(file.url);
    expect(pub.status).toBe(200);
    expect(pub.headers.get("content-disposition")).toBe(disposition);
    expect(pub.bytes.toString()).toBe("hello");
  });

  test("a name sent as filename* (RFC 5987) or with backslash escapes is decoded", async () => {
    const t = await start();
    const viaExt = await t.upload({ rawDisposition: `form-data; name="file"; filename="fallback.txt"; filename*=UTF-8''%E2%82%AC%20rates.txt`, type: "text/plain", data: "1" });
    expect(viaExt.body.file.originalFilename).toBe("€ rates.txt");
    const viaEscapes = await t.upload({ rawDisposition: `form-data; name="file"; filename="a \\"quoted\\" name.txt"`, type: "text/plain", data: "1" });
    expect(viaEscapes.body.file.originalFilename).toBe(`a "quoted" name.txt`);
  });

  test("another tenant or another app's tenant gets 404 on read and delete, and the file survives", async () => {
    const t = await start();
    const up = await t.upload({ filename: "mine.png", data: sample("png") });
    const id = up.body.file.id;
    const other = await signupTenant(t);
    const app2 = await t.backend.admin.createApp({ name: "second" });
    const foreign = await signupTenant(t, { key: app2.publishableKey, appId: app2.id });
    for (const who of [other, foreign]) {
      expectError(await t.request("GET", `/api/v1/files/${id}`, { bearer: who.bearer }), 404, "not_found");
      expectError(await t.request("DELETE", `/api/v1/files/${id}`, { bearer: who.bearer }), 404, "not_found");
    }
    expect((await t.request("GET", `/api/v1/files/${id}`, { bearer: t.tenant.bearer })).status).toBe(200);
    expect((await t.fetchPublic(up.body.file.url)).status).toBe(200);
    expectError(await t.uploadRaw(multipart([{ filename: "a.txt", data: "x" }]), MULTIPART, { ...t.tenant, bearer: { ...t.tenant.bearer, accessToken: "nope" } }), 401, "invalid_access_token");
    expectError(await t.request("GET", `/api/v1/files/${id}`), 401, "unauthorized");
    expectError(await t.request("DELETE", `/api/v1/files/${id}`), 401, "unauthorized");
  });

  test("range requests: 206 with content-range, suffix and open ranges, 416 when unsatisfiable", async () => {
    const t = await start();
    const data = sample("mp3", 5000);
    const { url } = (await t.upload({ filename: "song.mp3", type: "audio/mpeg", data })).body.file;
    const cases = [
      { range: "bytes=0-99", status: 206, slice: [0, 100], contentRange: "bytes 0-99/5000" },
      { range: "bytes=4990-", status: 206, slice: [4990, 5000], contentRange: "bytes 4990-4999/5000" },
      { range: "bytes=-10", status: 206, slice: [4990, 5000], contentRange: "bytes 4990-4999/5000" },
      { range: "bytes=100-999999", status: 206, slice: [100, 5000], contentRange: "bytes 100-4999/5000" },
      { range: "bytes=0-0", status: 206, slice: [0, 1], contentRange: "bytes 0-0/5000" },
      { range: "bytes=0-1,5-6", status: 200, slice: [0, 5000], contentRange: null },
      { range: "pages=1", status: 200, slice: [0, 5000], contentRange: null },
    ];
    for (const c of cases) {
      const res = await t.fetchPublic(url, { range: c.range });
      expect({ range: c.range, status: res.status, contentRange: res.headers.get("content-range"), length: res.headers.get("content-length"), same: res.bytes.equals(data.subarray(c.slice[0], c.slice[1])) })
        .toEqual({ range: c.range, status: c.status, contentRange: c.contentRange, length: String(c.slice[1]! - c.slice[0]!), same: true });
    }
    for (const range of ["bytes=5000-", "bytes=9000-9100", "bytes=-0"]) {
      const res = await t.fetchPublic(url, { range });
      expect({ range, status: res.status, error: res.json?.error, contentRange: res.headers.get("content-range") })
        .toEqual({ range, status: 416, error: "range_not_satisfiable", contentRange: "bytes */5000" });
    }
    const etag = (await t.fetchPublic(url)).headers.get("etag")!;
    expect((await t.fetchPublic(url, { range: "bytes=0-9", "if-range": etag })).status).toBe(206);
    expect((await t.fetchPublic(url, { range: "bytes=0-9", "if-range": '"stale"' })).status).toBe(200);
  });

  test.each([
    { case: "JSON instead of multipart", contentType: "application/json", body: '{"file":"x"}', status: 415, code: "unsupported_media_type" },
    { case: "no content-type", contentType: null, body: "raw bytes", status: 415, code: "unsupported_media_type" },
    { case: "urlencoded form", contentType: "application/x-www-form-urlencoded", body: "file=x", status: 415, code: "unsupported_media_type" },
    { case: "multipart without a boundary", contentType: "multipart/form-data", body: multipart([{ filename: "a.txt", data: "x" }]), status: 400, code: "invalid_request" },
    { case: "no part named file", contentType: MULTIPART, body: multipart([{ name: "other", filename: "a.txt", data: "x" }]), status: 400, code: "invalid_request" },
    { case: "two parts named file", contentType: MULTIPART, body: multipart([{ filename: "a.txt", data: "x" }, { filename: "b.txt", data: "y" }]), status: 400, code: "invalid_request" },
    { case: "a body cut before the closing boundary", contentType: MULTIPART, body: multipart([{ filename: "a.txt", data: "x" }]).subarray(0, 120), status: 400, code: "invalid_request" },
    { case: "an empty body", contentType: MULTIPART, body: "", status: 400, code: "invalid_request" },
    { case: "a part without content-disposition", contentType: MULTIPART, body: `--${BOUNDARY}\r\ncontent-type: text/plain\r\n\r\nx\r\n--${BOUNDARY}--\r\n`, status: 400, code: "invalid_request" },
  ])("$case is $status with { error, message }", async ({ contentType, body, status, code }) => {
    const t = await start();
    expectError(await t.uploadRaw(body, contentType), status, code);
    expect(await t.storedKeys()).toEqual([]);
  });

  test("other parts around the file are ignored, and a boundary split across chunks is found", async () => {
    const t = await start();
    const data = sample("jpeg", 200_000);
    const body = multipart([{ name: "caption", data: "hello" }, { filename: "a.jpg", type: "image/jpeg", data }, { name: "after", data: "x".repeat(1000) }]);
    // 7-byte chunks: every delimiter and header block spans several reads
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= body.length) return controller.close();
        const size = at < 1000 || at > body.length - 2000 ? 7 : 65536;
        controller.enqueue(body.subarray(at, (at += size)));
      },
    });
    const up = await t.uploadRaw(stream, MULTIPART);
    expect(up.status).toBe(201);
    expect((await t.fetchPublic(up.body.file.url)).bytes.equals(data)).toBe(true);
  });

  test("an empty file is stored", async () => {
    const t = await start();
    const up = await t.upload({ filename: "empty.dat", data: "" });
    expect(up.status).toBe(201);
    expect(up.body.file).toMatchObject({ sizeBytes: 0, mimeType: "application/octet-stream", originalFilename: "empty.dat" });
    const pub = await t.fetchPublic(up.body.file.url);
    expect({ status: pub.status, length: pub.bytes.length }).toEqual({ status: 200, length: 0 });
  });

  test("file URLs use the configured CDN base URL", async () => {
    const t = await start({ files: { cdnBaseUrl: "https://cdn.example.com/" } });
    const file = (await t.upload({ filename: "a b.png", data: sample("png") })).body.file;
    expect(file.url).toBe(`https://cdn.example.com/api/v1/public/files/${file.id}/a%20b.png`);
    expect((await t.fetchPublic(file.url)).status).toBe(200);
  });
});

describe("the type of a file larger than its first 64 KiB", () => {
  const KiB = 1024;
  /** `size` bytes of plain text, with `insert` written at byte `at`. */
  const text = (size: number, insert = "", at = 0, start = "Words and numbers, 1 2 3.\n") => {
    const b = Buffer.alloc(size, "lorem ipsum dolor sit amet\n");
    b.write(start, 0, "utf8");
    if (insert) b.write(insert, at, "utf8");
    return b;
  };
  const json = Buffer.from(JSON.stringify({ rows: Array.from({ length: 8000 }, (_, i) => ({ i, name: `row ${i}` })) }));

  test("is sniffed from all its bytes, as a small file's is", async () => {
    const t = await startFilesBackend(DRIVERS[0]);
    const cases = [
      { name: "plain.txt", data: text(200 * KiB), mime: "text/plain" },
      // "é" is two bytes: its first is the head's last byte, its second the next chunk's first
      { name: "split.txt", data: text(200 * KiB, "é", 64 * KiB - 1), mime: "text/plain" },
      { name: "late-control.txt", data: text(200 * KiB, "\u0001", 150 * KiB), mime: "application/octet-stream" },
      { name: "late-invalid.txt", data: Buffer.concat([text(100 * KiB), Buffer.from([0xff]), text(100 * KiB)]), mime: "application/octet-stream" },
      { name: "table.csv", data: text(200 * KiB), mime: "text/csv" },
      { name: "data.json", data: json, mime: "application/json" },
      { name: "broken.json", data: Buffer.concat([json, Buffer.from("]")]), mime: "text/plain" },
      { name: "a.png", data: sample("png", 200 * KiB), mime: "image/png" },
      { name: "a.bin", data: Buffer.concat([sample("unknown"), opaqueBytes(200 * KiB)]), mime: "application/octet-stream" },
    ];
    expect(json.length).toBeGreaterThan(128 * KiB);
    for (const c of cases) {
      const up = await t.upload({ filename: c.name, type: "application/octet-stream", data: c.data });
      expect({ name: c.name, status: up.status, mime: up.body?.file?.mimeType }).toEqual({ name: c.name, status: 201, mime: c.mime });
      expect((await t.fetchPublic(up.body.file.url)).bytes.equals(c.data)).toBe(true);
    }
    // Markup in the first bytes is refused whatever follows.
    expectError(await t.upload({ filename: "page.txt", data: text(200 * KiB, "", 0, "<html><script>alert(1)</script>") }), 415, "unsupported_media_type");
    expect(await t.storedKeys()).toHaveLength(cases.length);
  });

  test("is sniffed without reading a file that is not text whole (a 3 GiB file could not be read at once)", async () => {
    const path = join(tempDir(), "spooled");
    // 100 KiB of text, then zeros (a control character) up to 3 GiB, sparse on disk.
    await writeFile(path, text(100 * KiB));
    await truncate(path, 3 * 1024 * 1024 * KiB);
    let held = 0;
    const whole = <T,>(task: () => Promise<T>) => (held++, task());
    expect(await sniffSpool(path, 3 * 1024 * 1024 * KiB, ".txt", whole)).toEqual({ mimeType: "application/octet-stream" });
    // Nothing was held whole, so no slot of the two that bound memory was taken.
    expect(held).toBe(0);
  });
});

describe("files configuration", () => {
  test.each([
    [{ files: { maxBytes: 0 } }, "files.maxBytes"],
    [{ files: { maxBytes: 1.5 } }, "files.maxBytes"],
    [{ files: { cdnBaseUrl: "cdn.example.com" } }, "files.cdnBaseUrl"],
    [{ files: { cdnBaseUrl: "https://cdn.example.com/?a=1" } }, "files.cdnBaseUrl"],
    [{ files: { unknown: 1 } }, "files.unknown"],
  ])("a bad option fails at startup naming it: %j", async (config, name) => {
    const err = await createTenantBackend({ dataDir: tempDir(), logger: "silent", ...(config as object) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(name);
  });

  test("files.maxBytes sets the limit", async () => {
    const t = await startFilesBackend(DRIVERS[1], { files: { maxBytes: 1000 } });
    expect((await t.upload({ filename: "a.bin", data: opaqueBytes(1000) })).status).toBe(201);
    const over = await t.upload({ filename: "b.bin", data: opaqueBytes(1001) });
    expectError(over, 413, "payload_too_large");
    expect(over.body.message).toContain("1000-byte limit");
  });
});

async function withQuota(t: FilesBackend, quota: number | boolean) {
  await t.backend.admin.updateApp(t.app.id, { settings: { billing: { defaultEntitlements: { storage_bytes: quota } } } });
}

describe.each(DRIVERS)("storage quota on the $name driver", (driver) => {
  test("an upload past storage_bytes is 402 limit_reached and stores nothing; bytes count per tenant", async () => {
    const t = await startFilesBackend(driver);
    await withQuota(t, 1000);
    const first = await t.upload({ filename: "a.bin", data: opaqueBytes(600) });
    expect(first.status).toBe(201);
    expectError(await t.upload({ filename: "b.bin", data: opaqueBytes(600) }), 402, "limit_reached");
    expect(await t.storedKeys()).toHaveLength(1);
    expect(await t.backend.core.db.files.usedBytes(t.app.id, t.tenant.id)).toBe(600);

    // exactly up to the quota is fine
    expect((await t.upload({ filename: "c.bin", data: opaqueBytes(400) })).status).toBe(201);
    // another tenant has a quota of its own
    const other = await signupTenant(t);
    expect((await t.upload({ filename: "d.bin", data: opaqueBytes(1000) }, other)).status).toBe(201);
    // deleting frees the bytes
    await t.request("DELETE", `/api/v1/files/${first.body.file.id}`, { bearer: t.tenant.bearer });
    expect((await t.upload({ filename: "e.bin", data: opaqueBytes(600) })).status).toBe(201);
  });

  test("storage_bytes false allows nothing but empty files; true means no limit", async () => {
    const t = await startFilesBackend(driver);
    await withQuota(t, false);
    expectError(await t.upload({ filename: "a.bin", data: "x" }), 402, "limit_reached");
    expect((await t.upload({ filename: "empty.bin", data: "" })).status).toBe(201);
    await withQuota(t, true);
    expect((await t.upload({ filename: "a.bin", data: opaqueBytes(5000) })).status).toBe(201);
  });
});

describe.each(DRIVERS)("cleanup and failures on the $name driver", (driver) => {
  test("tenant.deleting removes the tenant's blobs and only theirs", async () => {
    const t = await startFilesBackend(driver);
    const other = await signupTenant(t);
    const mine = [await t.upload({ filename: "1.png", data: sample("png") }), await t.upload({ filename: "2.txt", data: "two" })].map((r) => r.body.file);
    const theirs = (await t.upload({ filename: "3.txt", data: "three" }, other)).body.file;
    const app = (await t.backend.core.db.apps.findById(t.app.id))!;
    await t.backend.core.hooks.emit("tenant.deleting", { app, tenantId: t.tenant.id });
    await t.backend.core.db.tenants.remove(t.app.id, t.tenant.id);
    expect(await t.storedKeys()).toEqual([theirs.pathname.replace(/\//g, ":")]);
    for (const f of mine) expect((await t.fetchPublic(f.url)).status).toBe(404);
    expect((await t.fetchPublic(theirs.url)).status).toBe(200);
  });

  test("deleting an app removes its blobs and leaves other apps' blobs", async () => {
    const t = await startFilesBackend(driver);
    const app2 = await t.backend.admin.createApp({ name: "second" });
    const tenant2 = await signupTenant(t, { key: app2.publishableKey, appId: app2.id });
    for (let i = 0; i < 3; i++) await t.upload({ filename: `${i}.txt`, data: `file ${i}` });
    const kept = (await t.upload({ filename: "kept.txt", data: "kept" }, tenant2)).body.file;
    await t.backend.admin.deleteApp(t.app.id);
    expect(await t.storedKeys()).toEqual([kept.pathname.replace(/\//g, ":")]);
    expect((await t.backend.core.db.stats.appUsage(t.app.id, 0)).fileBytes).toBe(0);
  });

  test("a blob write that fails leaves no metadata row", async () => {
    const dataDir = (await import("./_helpers.ts")).tempDir();
    const base = await driver.explicit(dataDir);
    const t = await startFilesBackend(driver, {
      dataDir,
      storage: { ...base, setItemRaw: () => Promise.reject(new Error("disk full")) },
    });
    expectError(await t.upload({ filename: "a.png", data: sample("png") }), 503, "unavailable");
    expect(await t.backend.core.db.files.usedBytes(t.app.id, t.tenant.id)).toBe(0);
    expect(await t.storedKeys()).toEqual([]);
  });

  test("a metadata insert that fails (the tenant is deleted mid-upload) leaves no blob", async () => {
    const dataDir = (await import("./_helpers.ts")).tempDir();
    const base = await driver.explicit(dataDir);
    let onWrite = async () => {};
    const t = await startFilesBackend(driver, {
      dataDir,
      storage: { ...base, setItemRaw: async (key: string, value: unknown, opts: unknown) => { await base.setItemRaw!(key, value, opts as never); await onWrite(); } },
    });
    onWrite = async () => {
      await t.backend.core.db.tenants.remove(t.app.id, t.tenant.id);
    };
    expectError(await t.upload({ filename: "a.png", data: sample("png") }), 401, "session_ended");
    expect(await t.storedKeys()).toEqual([]);
  });
});
