import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { createStorage, type Storage } from "unstorage";
import fsDriver from "unstorage/drivers/fs";
import { resolveConfig, type TenantBackendConfig } from "../config.ts";
import { createCore } from "../core.ts";
import { CliError } from "./shared.ts";
import type { Side } from "./store-sides.ts";

/**
 * Which configuration describes which side: a data directory describes itself (its
 * tenantd.db, files/ and secret.key). A PostgreSQL database holds no blobs and no key, so
 * its side is what `tenantd serve` would run with: the config file and TENANTD_* variables
 * (TENANTD_DATA_DIR, TENANTD_SECRET_KEY, the storage options).
 */
const keyDirOf = (side: Side, configured: TenantBackendConfig) => (side.kind === "sqlite" ? side.dir : resolve(configured.dataDir ?? ".tenantd"));

function parseKey(raw: string, origin: string): Buffer {
  const t = raw.trim();
  const key = /^[0-9a-f]{64}$/i.test(t) ? Buffer.from(t, "hex") : Buffer.from(t, "base64");
  if (key.length !== 32) throw new CliError(`the server key in ${origin} is not 32 bytes (64 hex characters or base64).`);
  return key;
}

/**
 * The server key the target must run with is the source's: it opens the stored secrets
 * (webhook, OAuth, Stripe) and signs tenants' access tokens. A configured key
 * (TENANTD_SECRET_KEY, config `secretKey`) serves both sides; otherwise the source's
 * secret.key is copied beside the target, and a different key already there is refused.
 */
export function settleServerKey(from: Side, to: Side, configured: TenantBackendConfig): { key: Buffer; note: string } {
  if (configured.secretKey) return { key: parseKey(configured.secretKey, "TENANTD_SECRET_KEY (or the config file's secretKey)"), note: "server key: TENANTD_SECRET_KEY (or the config file's secretKey), for both sides" };
  const sourceFile = join(keyDirOf(from, configured), "secret.key");
  const targetFile = join(keyDirOf(to, configured), "secret.key");
  if (!existsSync(sourceFile)) {
    throw new CliError(
      `no server key for the source: ${sourceFile} does not exist and TENANTD_SECRET_KEY is not set. Set TENANTD_SECRET_KEY to the key the source server runs with${from.kind === "postgres" ? ", or point TENANTD_DATA_DIR at the data directory holding its secret.key" : ""}.`,
    );
  }
  const key = parseKey(readFileSync(sourceFile, "utf8"), sourceFile);
  if (sourceFile === targetFile) return { key, note: `server key: ${sourceFile}, for both sides` };
  if (existsSync(targetFile)) {
    if (!parseKey(readFileSync(targetFile, "utf8"), targetFile).equals(key)) {
      throw new CliError(
        `${targetFile} holds another server key than the source's (${sourceFile}): on the copy, stored secrets would not open and every tenant's tokens would stop working. Replace it with the source's key file, or remove it and run again.`,
      );
    }
    return { key, note: `server key: ${targetFile} already holds the source's key` };
  }
  mkdirSync(keyDirOf(to, configured), { recursive: true, mode: 0o700 });
  writeFileSync(targetFile, key.toString("hex") + "\n", { mode: 0o600, flag: "wx" });
  const hint = to.kind === "postgres" ? " Run the servers on PostgreSQL with this data directory (TENANTD_DATA_DIR), or with TENANTD_SECRET_KEY set to this key." : "";
  return { key, note: `server key: copied ${sourceFile} to ${targetFile}.${hint}` };
}

export interface SideStorage {
  storage: Storage;
  label: string;
  /** The directory, when the fs driver holds the blobs. */
  dir: string | null;
  close(): Promise<void>;
}

function fsStorage(dir: string): SideStorage {
  const storage = createStorage({ driver: fsDriver({ base: dir }) });
  return { storage, label: dir, dir, close: () => Promise.resolve(storage.dispose()) };
}

/**
 * The storage `serve` opens for this configuration, chosen by createCore itself (the fs
 * driver under the data directory, a driver object from a config module, or the storage
 * options such as S3's), so the copy never disagrees with the server about where blobs
 * are. The core stands on a throwaway in-memory database: only its storage is used.
 */
function configuredStorage(configured: TenantBackendConfig, key: Buffer): SideStorage {
  const { database: _database, ...rest } = configured;
  const env = { ...process.env };
  delete env.TENANTD_DATABASE_URL;
  delete env.TENANTD_DATABASE_PATH;
  const core = createCore(resolveConfig({ ...rest, databasePath: ":memory:", secretKey: key.toString("hex"), logger: "error", bootstrap: false }, env));
  const { driver } = core.storage.getMount("");
  const base = (driver.options as { base?: unknown } | undefined)?.base;
  const dir = driver.name === "fs" && typeof base === "string" ? resolve(base) : null;
  return { storage: core.storage, label: dir ?? `the configured storage (${driver.name ?? "custom driver"})`, dir, close: () => core.close() };
}

/**
 * Where a side's blobs are: `--from-files`/`--to-files`, else a data directory's files/, else
 * (PostgreSQL) the storage its configuration resolves.
 */
export function sideStorage(side: Side, filesFlag: string | undefined, configured: TenantBackendConfig, key: Buffer): SideStorage {
  if (filesFlag) return fsStorage(resolve(filesFlag));
  if (side.kind === "sqlite") return fsStorage(join(side.dir, "files"));
  return configuredStorage(configured, key);
}
