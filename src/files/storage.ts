import { join } from "node:path";
import { createStorage, type Driver, type Storage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import s3Driver from "unstorage/drivers/s3";
import { ConfigError, type ResolvedConfig } from "../config.ts";
import { createS3Bucket, S3Error, sha256Hex, type S3Bucket, type S3Options } from "./s3.ts";

/** The S3 bucket behind a storage opened from `storage: { driver: "s3", … }`, for streaming reads and writes. */
const buckets = new WeakMap<Storage, S3Bucket>();

export function s3Of(storage: Storage): S3Bucket | undefined {
  return buckets.get(storage);
}

/**
 * The blob storage the configuration names: a driver passed as `storage` as it is, an S3
 * bucket from `storage: { driver: "s3", … }` (env TENANTD_STORAGE=s3), else the fs driver
 * under `<dataDir>/files`. The CLI, the server and `tenantd store copy` all open it here.
 */
export function openStorage(config: ResolvedConfig): Storage {
  if (config.storage) return createStorage({ driver: config.storage });
  const choice = config.storageChoice;
  if (choice.driver === "fs") return createStorage({ driver: fsDriver({ base: join(config.dataDir, "files") }) });
  const bucket = createS3Bucket(choice);
  const storage = createStorage({ driver: s3StorageDriver(bucket) });
  buckets.set(storage, bucket);
  return storage;
}

const toBytes = (value: unknown): Uint8Array => {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (typeof value === "string") return new TextEncoder().encode(value);
  throw new S3Error(0, "invalid", "files: only bytes or text can be written to S3");
};

/**
 * unstorage's s3 driver with the calls that go wrong in it replaced: writes and reads that
 * report a missing bucket instead of losing the bytes or reading "no such file", deletes
 * that name S3's error, and `getKeys` that honours its prefix and reads every page.
 */
export function s3StorageDriver(bucket: S3Bucket | S3Options): Driver {
  const s3 = "put" in bucket ? bucket : createS3Bucket(bucket);
  const put = async (key: string, value: unknown) => {
    const bytes = toBytes(value);
    await s3.put(key, bytes, bytes.byteLength, sha256Hex(bytes));
  };
  return {
    ...s3Driver({ ...s3.options }),
    async getItemRaw(key) {
      const res = await s3.get(key);
      return res ? new Uint8Array(await res.arrayBuffer()) : null;
    },
    async getItem(key) {
      const res = await s3.get(key);
      return res ? res.text() : null;
    },
    setItemRaw: put,
    setItem: put,
    removeItem: (key) => s3.remove(key),
    getKeys: (base) => s3.list(base ?? ""),
  };
}

/** What an S3 failure means for the person who configured it, in the options' names. */
export function describeS3Failure(e: unknown, options: S3Options): string {
  if (!(e instanceof S3Error)) return String(e);
  switch (e.code) {
    case "NoSuchBucket":
      return `the S3 bucket "${options.bucket}" does not exist at ${options.endpoint}: create it, or fix storage.bucket (env TENANTD_S3_BUCKET). (${e.message})`;
    case "InvalidAccessKeyId":
    case "SignatureDoesNotMatch":
    case "AccessDenied":
    case "InvalidToken":
    case "ExpiredToken":
      return `S3 at ${options.endpoint} refused the credentials for bucket "${options.bucket}": check storage.accessKeyId and storage.secretAccessKey (env TENANTD_S3_ACCESS_KEY_ID, TENANTD_S3_SECRET_ACCESS_KEY) and that they may list, read, write and delete objects in it. (${e.message})`;
    case "unreachable":
      return `${e.message}: check storage.endpoint (env TENANTD_S3_ENDPOINT) and the network.`;
    default:
      return `S3 at ${options.endpoint} (bucket "${options.bucket}", region "${options.region}") failed: ${e.message}. Check storage.region (env TENANTD_S3_REGION) and storage.endpoint.`;
  }
}

/**
 * `ready` that also waits for the configured S3 bucket to answer: a server with a missing
 * bucket or wrong keys refuses to start, naming the option, instead of failing uploads later.
 * The check starts when someone waits for `ready` (the server does; a CLI command that never
 * touches files makes no S3 call and never waits on an unreachable endpoint to exit).
 */
export function withStorageCheck(config: ResolvedConfig, ready: Promise<void>): Promise<void> {
  const choice = config.storageChoice;
  if (config.storage || choice.driver !== "s3") return ready;
  let checked: Promise<void> | undefined;
  const start = () =>
    (checked ??= Promise.all([
      ready,
      createS3Bucket(choice)
        .check()
        .catch((e: unknown) => {
          throw new ConfigError(`tenantd config: storage: ${describeS3Failure(e, choice)}`);
        }),
    ]).then(() => undefined));
  // A promise in all but eagerness: `await`, then, catch and finally start the check.
  return {
    then: (ok, ko) => start().then(ok, ko),
    catch: (ko) => start().catch(ko),
    finally: (fn) => start().finally(fn),
    [Symbol.toStringTag]: "Promise",
  } satisfies Promise<void>;
}
