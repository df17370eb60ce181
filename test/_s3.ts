import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { AwsClient } from "aws4fetch";
import type { StorageOptions } from "../src/files/storage-config.ts";

/** The run's local S3 server (test/_s3-server.ts). */
export const s3Server = () => inject("s3");

/** Signed requests to the local S3 server, as a person with the bucket's keys would make them. */
export function s3Client() {
  const { accessKeyId, secretAccessKey } = s3Server();
  return new AwsClient({ accessKeyId, secretAccessKey, service: "s3", region: "us-east-1" });
}

/** A new, empty bucket of its own, so a test sees only its own objects. */
export async function newBucket(): Promise<string> {
  const name = `t-${randomBytes(6).toString("hex")}`;
  const res = await s3Client().fetch(`${s3Server().endpoint}/${name}`, { method: "PUT" });
  if (!res.ok) throw new Error(`could not create bucket ${name}: ${res.status} ${await res.text()}`);
  return name;
}

/** `storage` options for a backend on a new bucket of the local S3 server. */
export async function s3Storage(overrides: Partial<StorageOptions> = {}): Promise<StorageOptions> {
  const { endpoint, accessKeyId, secretAccessKey } = s3Server();
  return { driver: "s3", endpoint, region: "us-east-1", accessKeyId, secretAccessKey, bucket: await newBucket(), ...overrides };
}

/** The `TENANTD_*` variables of the same, for a `tenantd` child process. */
export function s3Env(o: StorageOptions): Record<string, string> {
  return {
    TENANTD_STORAGE: "s3",
    TENANTD_S3_BUCKET: o.bucket!,
    TENANTD_S3_REGION: o.region!,
    TENANTD_S3_ENDPOINT: o.endpoint!,
    TENANTD_S3_ACCESS_KEY_ID: o.accessKeyId!,
    TENANTD_S3_SECRET_ACCESS_KEY: o.secretAccessKey!,
  };
}
