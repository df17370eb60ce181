import { createReadStream, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { tmpdir } from "node:os";
import { extract, pack } from "tar-stream";
import { openDatabase } from "../db/sqlite/connection.ts";
import { backupDatabase, inspectDatabase } from "../db/sqlite/operations.ts";

/** What a backup archive (a .tar.gz) holds, in `tenantd-backup.json` at its root. */
interface Manifest {
  format: 1;
  createdAt: string;
  database: "tenantd.db";
  files: number;
  secretKey: boolean;
}

const MANIFEST = "tenantd-backup.json";

function* walk(dir: string): Generator<string> {
  if (!existsSync(dir)) return;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* walk(path);
    else if (entry.isFile()) yield path;
  }
}

export interface BackupResult {
  file: string;
  bytes: number;
  files: number;
  secretKey: boolean;
}

/**
 * Writes one archive of a data directory while the server may be running: the database
 * through SQLite's online backup API (a consistent snapshot), then the fs driver's blobs,
 * and the server key only when asked. Blobs are read after the snapshot, so a file uploaded
 * meanwhile may be in the archive without its row (harmless), never a row without its blob
 * unless the file was deleted meanwhile.
 */
export async function createBackup(dataDir: string, target: string, opts: { includeSecretKey: boolean; progress: (line: string) => void }): Promise<BackupResult> {
  const dbPath = join(dataDir, "tenantd.db");
  if (!existsSync(dbPath)) throw new Error(`no tenantd data directory at ${dataDir} (no tenantd.db there); point --data-dir (or TENANTD_DATA_DIR) at the server's data directory.`);
  const keyFile = join(dataDir, "secret.key");
  if (opts.includeSecretKey && !existsSync(keyFile)) throw new Error(`--include-secret-key: there is no ${keyFile} (is the key given by TENANTD_SECRET_KEY? Then keep that value safe instead).`);
  const work = mkdtempSync(join(tmpdir(), "tenantd-backup-"));
  try {
    const snapshot = join(work, "tenantd.db");
    const db = openDatabase(dbPath);
    try {
      let last = -1;
      await backupDatabase(db, snapshot, (done, total) => {
        const pct = total ? Math.floor((done / total) * 100) : 100;
        if (pct >= last + 25 || done === total) opts.progress(`backup: database ${pct}% (${done}/${total} pages)`);
        last = pct;
      });
      opts.progress(`backup: database snapshot taken (${statSync(snapshot).size} bytes)`);
    } finally {
      db.close();
    }
    const blobs = [...walk(join(dataDir, "files"))];
    const manifest: Manifest = { format: 1, createdAt: new Date().toISOString(), database: "tenantd.db", files: blobs.length, secretKey: opts.includeSecretKey };
    const tar = pack();
    const output = pipeline(tar, createGzip(), createWriteStream(target, { mode: 0o600 }));
    const addFile = (name: string, path: string) =>
      new Promise<void>((resolvePromise, reject) => {
        const size = statSync(path).size;
        const entry = tar.entry({ name, size, mode: 0o600 }, (err) => (err ? reject(err) : resolvePromise()));
        createReadStream(path).on("error", reject).pipe(entry);
      });
    tar.entry({ name: MANIFEST }, JSON.stringify(manifest, null, 2) + "\n");
    await addFile("tenantd.db", snapshot);
    let n = 0;
    for (const blob of blobs) {
      // A blob deleted since the listing is skipped: its row is gone from the snapshot or soon will be.
      if (!existsSync(blob)) continue;
      await addFile(["files", ...relative(join(dataDir, "files"), blob).split(sep)].join("/"), blob);
      if (++n % 500 === 0) opts.progress(`backup: files ${n}/${blobs.length}`);
    }
    if (opts.includeSecretKey) await addFile("secret.key", keyFile);
    tar.finalize();
    await output;
    return { file: target, bytes: statSync(target).size, files: n, secretKey: opts.includeSecretKey };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export interface RestoreResult {
  dataDir: string;
  createdAt: string;
  integrity: string;
  counts: Record<string, number>;
  files: number;
  /** whether a server key was restored (the archive holds one and its manifest says so) */
  secretKey: boolean;
  /** entries of the archive that were not restored: names a backup does not write */
  skipped: string[];
}

const isEmptyDir = (dir: string) => !existsSync(dir) || readdirSync(dir).length === 0;

/** What a backup writes besides the blobs, and the most bytes each may hold. */
const SMALL_ENTRIES: Record<string, number> = { [MANIFEST]: 64 * 1024, "secret.key": 1024 };
/** A blob's name under files/: the storage driver's own key segments, nothing that climbs out. */
const BLOB_NAME = /^files\/(?:[A-Za-z0-9_.-]+\/)*[A-Za-z0-9_.-]+$/;

/** Which entry an archive name is, or undefined for a name a backup never writes. */
function entryKind(name: string): "small" | "database" | "blob" | undefined {
  if (Object.hasOwn(SMALL_ENTRIES, name)) return "small";
  if (name === "tenantd.db") return "database";
  if (BLOB_NAME.test(name) && !name.split("/").some((part) => part === "." || part === "..")) return "blob";
  return undefined;
}

/**
 * Unpacks a backup into a data directory: refuses a non-empty one unless `force`, unpacks
 * beside it first and checks the database (`PRAGMA integrity_check`) before anything in the
 * target changes. Only what a backup writes is restored: the manifest, the database, blobs
 * under files/, and secret.key when the manifest says the backup took it; any other entry
 * is skipped and reported, a name given twice is refused, and the small entries are bounded.
 */
export async function restoreBackup(archive: string, dataDir: string, opts: { force: boolean }): Promise<RestoreResult> {
  if (!existsSync(archive)) throw new Error(`no backup file at ${archive}`);
  if (!isEmptyDir(dataDir) && !opts.force) {
    throw new Error(`${dataDir} is not empty: restore into a new or empty directory, or pass --force to replace what is there (stop any server using it first).`);
  }
  mkdirSync(dirname(dataDir), { recursive: true });
  const staging = mkdtempSync(`${dataDir.replace(/[\\/]+$/, "")}.restore-`);
  try {
    let files = 0;
    const seen = new Set<string>();
    const skipped: string[] = [];
    const unpack = extract();
    unpack.on("entry", (header, stream, next) => {
      const skip = () => {
        stream.resume();
        stream.on("end", next);
      };
      const kind = entryKind(header.name);
      const target = resolve(staging, header.name);
      if (header.type !== "file" || !kind || !target.startsWith(staging + sep)) {
        if (skipped.length < 100) skipped.push(header.name.slice(0, 200));
        return skip();
      }
      if (seen.has(header.name)) return next(new Error(`${header.name} is in the archive twice`));
      seen.add(header.name);
      const bound = kind === "small" ? SMALL_ENTRIES[header.name]! : Infinity;
      if ((header.size ?? 0) > bound) return next(new Error(`${header.name} is ${header.size} bytes, more than a backup writes (${bound})`));
      mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
      if (kind === "blob") files++;
      pipeline(stream, createWriteStream(target, { mode: 0o600 })).then(() => next(), next);
    });
    try {
      await pipeline(createReadStream(archive), createGunzip(), unpack);
    } catch (e) {
      throw new Error(`${archive} is not a tenantd backup archive (${(e as Error).message})`);
    }
    const manifestPath = join(staging, MANIFEST);
    if (!existsSync(manifestPath) || !existsSync(join(staging, "tenantd.db"))) throw new Error(`${archive} is not a tenantd backup archive (no ${MANIFEST} or tenantd.db in it)`);
    const manifest = JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest;
    // A key the backup did not take is not this server's: it stays out, and is reported.
    const keyPath = join(staging, "secret.key");
    if (existsSync(keyPath) && manifest.secretKey !== true) {
      rmSync(keyPath);
      skipped.push("secret.key");
    }
    if (typeof manifest.files === "number" && files > manifest.files) {
      throw new Error(`${archive} holds ${files} files where its manifest lists ${manifest.files}; nothing was restored.`);
    }
    let inspected;
    try {
      inspected = inspectDatabase(join(staging, "tenantd.db"));
    } catch (e) {
      throw new Error(`the database in ${archive} cannot be opened (${(e as Error).message}); nothing was restored.`);
    }
    const { integrity, counts } = inspected;
    if (integrity !== "ok") throw new Error(`the database in ${archive} fails SQLite's integrity check (${integrity}); nothing was restored.`);
    rmSync(manifestPath);
    const secretKey = existsSync(keyPath);
    if (existsSync(dataDir)) rmSync(dataDir, { recursive: true, force: true });
    renameSync(staging, dataDir);
    return { dataDir, createdAt: manifest.createdAt, integrity, counts, files, secretKey, skipped };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}
