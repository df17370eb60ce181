import { createHash } from "node:crypto";
import { AwsClient } from "aws4fetch";

/**
 * The few S3 calls files need, signed with aws4fetch (the signer unstorage's s3 driver uses).
 * The driver itself has no way to send a stream of known length or to ask for a byte range,
 * treats a missing bucket as a missing object (a PUT into it "succeeds") and lists only the
 * first 1,000 keys of the whole bucket whatever the prefix; these calls do each properly.
 */

export interface S3Options {
  bucket: string;
  region: string;
  /** `https://s3.<region>.amazonaws.com`, an R2 or MinIO address: path-style requests go there. */
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** S3 answered with an error (its code: NoSuchBucket, InvalidAccessKeyId, …) or could not be reached (code `unreachable`). */
export class S3Error extends Error {
  override name = "S3Error";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface S3Bucket {
  readonly options: S3Options;
  /**
   * Writes an object of `size` bytes whose SHA-256 (hex) is known, so S3 checks it. A stream
   * comes from a function that opens it, so a write S3 fails for a passing reason (5xx, 429,
   * a reset connection) is sent again from the start.
   */
  put(key: string, body: (() => ReadableStream<Uint8Array>) | Uint8Array, size: number, sha256: string, headers?: Record<string, string>): Promise<void>;
  /** The object (bytes `start..end` inclusive with a range), or null when there is no such key. */
  get(key: string, range?: { start: number; end: number } | null): Promise<Response | null>;
  /** Removes the object; a key that is already gone is fine. */
  remove(key: string): Promise<void>;
  /** Every key under `prefix` (keys use `/`), all pages. */
  list(prefix: string, pageSize?: number): Promise<string[]>;
  /** Throws an S3Error unless the bucket exists and the credentials may list it. */
  check(): Promise<void>;
}

/** An unstorage key (`:` separated) or a pathname as an S3 object key (`/` separated). */
export const objectKey = (key: string) => key.split(/[:/\\]/).filter(Boolean).join("/");

const encodeKey = (key: string) => objectKey(key).split("/").map(encodeURIComponent).join("/");

const decodeXml = (s: string) =>
  s.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_, e: string) =>
    ({ lt: "<", gt: ">", quot: '"', apos: "'", amp: "&" })[e.toLowerCase()] ?? String.fromCodePoint(e[1]!.toLowerCase() === "x" ? parseInt(e.slice(2), 16) : Number(e.slice(1))),
  );

const tag = (xml: string, name: string) => {
  const m = new RegExp(`<${name}>([\\s\\S]*?)</${name}>`).exec(xml);
  return m ? decodeXml(m[1]!) : undefined;
};

/**
 * How long a call without a body to stream may take: a blackholed endpoint must not hold a
 * startup or a delete for ever. Reads and writes of bytes are bounded by the client instead.
 */
const SHORT_CALL_MS = 15_000;

/** Attempts of one object write, and the first wait between them (doubled each time). */
const PUT_ATTEMPTS = 4;
const PUT_RETRY_MS = 100;

export const sha256Hex = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

export function createS3Bucket(options: S3Options): S3Bucket {
  const keys = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey, service: "s3", region: options.region };
  const client = new AwsClient(keys);
  // aws4fetch retries a 5xx by sending the same body again, which a consumed stream cannot
  // be: writes go through a client that does not, and `put` retries with a reopened stream.
  const writer = new AwsClient({ ...keys, retries: 0 });
  const base = `${options.endpoint.replace(/\/+$/, "")}/${encodeURIComponent(options.bucket)}`;

  /** Signs and sends; an error answer becomes an S3Error, except a 404 of an object when `missingOk`. */
  async function call(url: string, init: RequestInit & { duplex?: "half" }, missingOk = false, via = client): Promise<Response | null> {
    let res: Response;
    try {
      res = await via.fetch(url, init);
    } catch (e) {
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      throw new S3Error(0, "unreachable", `cannot reach S3 at ${options.endpoint} (${cause?.code ?? cause?.message ?? (e as Error).message})`);
    }
    if (res.ok) return res;
    const text = init.method === "HEAD" ? "" : await res.text().catch(() => "");
    const code = tag(text, "Code") ?? (res.status === 404 ? "NotFound" : res.status === 403 ? "AccessDenied" : `HTTP${res.status}`);
    if (missingOk && res.status === 404 && code !== "NoSuchBucket") return null;
    throw new S3Error(res.status, code, `S3 answered ${res.status} ${code}${tag(text, "Message") ? `: ${tag(text, "Message")}` : ""}`);
  }

  return {
    options,
    async put(key, body, size, sha256, headers = {}) {
      for (let attempt = 1; ; attempt++) {
        try {
          await call(
            `${base}/${encodeKey(key)}`,
            {
              method: "PUT",
              body: (typeof body === "function" ? body() : body) as BodyInit,
              duplex: "half",
              // The payload hash is part of the signature: S3 refuses bytes that do not match it.
              headers: { ...headers, "content-length": String(size), "x-amz-content-sha256": sha256 },
            },
            false,
            writer,
          );
          return;
        } catch (e) {
          const passing = e instanceof S3Error && (e.status === 0 || e.status === 429 || e.status >= 500);
          if (!passing || attempt === PUT_ATTEMPTS) throw e;
          await new Promise((r) => setTimeout(r, PUT_RETRY_MS * 2 ** (attempt - 1)));
        }
      }
    },
    async get(key, range) {
      const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end}` } : {};
      return call(`${base}/${encodeKey(key)}`, { headers }, true);
    },
    async remove(key) {
      await call(`${base}/${encodeKey(key)}`, { method: "DELETE", signal: AbortSignal.timeout(SHORT_CALL_MS) }, true);
    },
    async list(prefix, pageSize = 1000) {
      const keys: string[] = [];
      let token: string | undefined;
      do {
        const q = new URLSearchParams({ "list-type": "2", prefix: objectKey(prefix) + (prefix && /[:/]$/.test(prefix) ? "/" : ""), "max-keys": String(pageSize) });
        if (token) q.set("continuation-token", token);
        const xml = await (await call(`${base}?${q}`, { signal: AbortSignal.timeout(SHORT_CALL_MS) }))!.text();
        for (const m of xml.matchAll(/<Contents>[\s\S]*?<Key>([\s\S]*?)<\/Key>/g)) keys.push(decodeXml(m[1]!));
        token = tag(xml, "IsTruncated") === "true" ? tag(xml, "NextContinuationToken") : undefined;
      } while (token);
      return keys;
    },
    async check() {
      await call(`${base}?list-type=2&max-keys=1`, { signal: AbortSignal.timeout(SHORT_CALL_MS) });
    },
  };
}
