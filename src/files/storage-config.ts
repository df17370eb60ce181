import type { S3Options } from "./s3.ts";

/** Where blobs go when no driver object is passed as `storage`: the data directory, or an S3 bucket. */
export type StorageChoice = { driver: "fs" } | ({ driver: "s3" } & S3Options);

/** `storage` as a config file or the library takes it: `{ driver: "s3", bucket, … }` (docs/files.md). */
export interface StorageOptions {
  /** `fs` (default) or `s3`; `s3` is chosen when a bucket is set. Env `TENANTD_STORAGE`. */
  driver?: "fs" | "s3";
  /** Env `TENANTD_S3_BUCKET`. */
  bucket?: string;
  /** Env `TENANTD_S3_REGION`; default `us-east-1` (`auto` for R2). */
  region?: string;
  /** Env `TENANTD_S3_ENDPOINT`; default `https://s3.<region>.amazonaws.com`. */
  endpoint?: string;
  /** Env `TENANTD_S3_ACCESS_KEY_ID`. */
  accessKeyId?: string;
  /** Env `TENANTD_S3_SECRET_ACCESS_KEY`; never a flag, redacted by `config print`. */
  secretAccessKey?: string;
}

/** S3 bucket names (the rules every S3-compatible store accepts). */
export const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

const NEEDED: [keyof S3Options, string][] = [
  ["bucket", "TENANTD_S3_BUCKET"],
  ["accessKeyId", "TENANTD_S3_ACCESS_KEY_ID"],
  ["secretAccessKey", "TENANTD_S3_SECRET_ACCESS_KEY"],
];

/**
 * The storage the options choose (already checked one by one): S3 needs a bucket and both
 * keys, said in the option's and the variable's names; region and endpoint have defaults.
 */
export function resolveStorageChoice(get: (path: string) => unknown, origin: (path: string) => string, fail: (message: string) => Error): StorageChoice {
  const bucket = get("storage.bucket") as string | undefined;
  const driver = (get("storage.driver") as "fs" | "s3" | undefined) ?? (bucket !== undefined ? "s3" : "fs");
  if (driver === "fs") return { driver };
  for (const [key, env] of NEEDED) {
    if (get(`storage.${key}`) === undefined) {
      throw fail(`storage.driver is "s3" (${origin(get("storage.driver") === undefined ? "storage.bucket" : "storage.driver")}) but storage.${key} is not set: set ${env} (option storage.${key}). See docs/files.md.`);
    }
  }
  const region = (get("storage.region") as string | undefined) ?? "us-east-1";
  return {
    driver,
    bucket: bucket!,
    region,
    endpoint: ((get("storage.endpoint") as string | undefined) ?? `https://s3.${region}.amazonaws.com`).replace(/\/+$/, ""),
    accessKeyId: get("storage.accessKeyId") as string,
    secretAccessKey: get("storage.secretAccessKey") as string,
  };
}
