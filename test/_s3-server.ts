import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import crypto, { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import S3rver from "s3rver";
import { AwsV4Signer } from "aws4fetch";
import type { TestProject } from "vitest/node";

/**
 * vitest globalSetup: one real S3-compatible server (the npm package s3rver, which keeps
 * objects as files) for the whole run, on a free loopback port, in a fresh temp directory,
 * removed after. Tests get its endpoint and keys through `inject("s3")`; test/_s3.ts makes
 * a bucket per backend. `startS3()` also works outside vitest (the multi-node test).
 *
 * s3rver checks that the access key id exists but not the SigV4 signature itself; the
 * middleware below recomputes it with the secret, as S3 does, so a wrong secret is refused
 * with SignatureDoesNotMatch and the tests of bad credentials mean something.
 */

export interface S3Server {
  endpoint: string;
  /** A bucket created at start. */
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  stop(): Promise<void>;
}

declare module "vitest" {
  export interface ProvidedContext {
    s3: Omit<S3Server, "stop">;
  }
}

// The key pair s3rver knows (its built-in account).
const ACCESS_KEY_ID = "S3RVER";
const SECRET_ACCESS_KEY = "S3RVER";

type KoaContext = { req: IncomingMessage; res: ServerResponse; status: number; body: unknown; set(name: string, value: string): void; originalUrl: string; method: string };

/** Refuses a request whose SigV4 signature was not made with SECRET_ACCESS_KEY. */
async function verifySignature(ctx: KoaContext, next: () => Promise<unknown>) {
  const auth = ctx.req.headers.authorization;
  const m = auth && /^AWS4-HMAC-SHA256 Credential=([^/]+)\/\d{8}\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]+)$/.exec(auth);
  if (!m) return next(); // anonymous reads (a public bucket) and s3rver's own errors
  const [, keyId, region, service, signed, signature] = m;
  const headers = new Headers();
  for (const name of signed!.split(";")) if (name !== "host") headers.set(name, String(ctx.req.headers[name] ?? ""));
  const signer = new AwsV4Signer({
    method: ctx.method,
    url: `http://${ctx.req.headers.host}${ctx.originalUrl}`,
    headers,
    accessKeyId: keyId!,
    secretAccessKey: SECRET_ACCESS_KEY,
    service,
    region,
    datetime: String(ctx.req.headers["x-amz-date"]),
    allHeaders: true,
  });
  if ((await signer.signature()) === signature) return next();
  ctx.status = 403;
  ctx.set("content-type", "application/xml");
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SignatureDoesNotMatch</Code><Message>The request signature we calculated does not match the signature you provided. Check your key and signing method.</Message></Error>`;
}

/**
 * s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3 (Node 17+) no
 * longer offers: every listing longer than one page answers 500. Its tokens only need to
 * round-trip, so DES with its 8-byte key and IV becomes AES-128 with both doubled. Nothing
 * else in the process uses DES.
 */
function letS3rverPage(): void {
  const c = crypto as unknown as Record<"createCipheriv" | "createDecipheriv", (alg: string, key: Buffer, iv: Buffer) => unknown>;
  for (const name of ["createCipheriv", "createDecipheriv"] as const) {
    const original = c[name];
    if ((original as { s3rver?: true }).s3rver) continue;
    c[name] = Object.assign(
      (alg: string, key: Buffer, iv: Buffer) => (alg === "des" ? original("aes-128-cbc", Buffer.concat([key, key]), Buffer.concat([iv, iv])) : original(alg, key, iv)),
      { s3rver: true as const },
    );
  }
}

export async function startS3(): Promise<S3Server> {
  letS3rverPage();
  const directory = await mkdtemp(join(tmpdir(), "tenantd-s3-"));
  const bucket = `tenantd-${randomBytes(4).toString("hex")}`;
  const server = new S3rver({ address: "127.0.0.1", port: 0, directory, silent: true, configureBuckets: [{ name: bucket, configs: [] }] });
  // First in the chain, before s3rver's own authentication (Koa composes on listen).
  (server as unknown as { middleware: unknown[] }).middleware.unshift(verifySignature);
  let port: number;
  try {
    ({ port } = await server.run());
  } catch (e) {
    await rm(directory, { recursive: true, force: true });
    throw new Error(`tenantd tests: could not start the local S3 server (npm package s3rver) in ${directory}: ${(e as Error).message}. Reinstall with \`npm ci\`.`);
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: ACCESS_KEY_ID,
    secretAccessKey: SECRET_ACCESS_KEY,
    async stop() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

export default async function setup(project: TestProject) {
  const { stop, ...s3 } = await startS3();
  project.provide("s3", s3);
  return stop;
}
