import * as v from "valibot";
import { createReadStream, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import type { DeveloperRow } from "../db/types.ts";
import { readJson } from "../http/body.ts";
import { noStore, requireDeveloper } from "../http/guards.ts";
import { createBackup } from "../backup/archive.ts";
import { auditRequest } from "../audit/http.ts";
import { fail } from "../errors.ts";
import { newToken } from "../crypto/random.ts";
import { toIso } from "../clock.ts";

/** Archives the dashboard makes, under `<dataDir>/backups`: only names of this shape are served. */
const NAME = /^tenantd-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:-\d+)?\.tar\.gz$/;
/** A download link lives this long and works once. */
const LINK_MS = 60_000;

export const BackupBody = v.strictObject({ password: v.pipe(v.string("password must be your developer password"), v.minLength(1, "password must be your developer password")) });

export const RESTORE_COMMAND = "npx tenantd restore ./<archive>.tar.gz --data-dir <a new, empty directory>";

/** Why this server cannot make backups from the dashboard, or null when it can. */
function unsupported(core: Core): string | null {
  if (core.config.database) return "This server keeps its data in PostgreSQL: back it up with pg_dump (docs/scaling.md), and the file blobs and server key with it.";
  if (core.config.databasePath !== join(core.config.dataDir, "tenantd.db")) return "This server's SQLite file is not <dataDir>/tenantd.db: run tenantd backup on the server instead.";
  return null;
}

const dirOf = (core: Core) => join(core.config.dataDir, "backups");

function listBackups(core: Core) {
  const dir = dirOf(core);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => NAME.test(n))
    .map((name) => {
      const s = statSync(join(dir, name));
      return { name, bytes: s.size, createdAt: toIso(s.mtimeMs)! };
    })
    .sort((a, b) => b.name.localeCompare(a.name));
}

/**
 * Backups from the dashboard (docs/dashboard.md, Backups). An archive holds every developer's
 * apps, so only a developer the operator named (`tenantd developer operator <email>`) may
 * make or download one, each time with their password again; never with the server key
 * (that stays a CLI choice); each is recorded in every app's audit trail.
 */
export function registerBackupRoutes(router: Router, core: Core): void {
  const links = new Map<string, { developerId: string; name: string; expires: number }>();
  let running = false;

  async function operator(event: H3Event): Promise<DeveloperRow> {
    const { developer } = await requireDeveloper(event, core);
    if (!(await core.db.developers.isBackupOperator(developer.id))) {
      throw fail("forbidden", "Backups hold every developer's apps: only a developer the server's operator named may make or download them (tenantd developer operator <email>).");
    }
    const reason = unsupported(core);
    if (reason) throw fail("conflict", reason);
    return developer;
  }
  async function stepUp(event: H3Event, developer: DeveloperRow): Promise<void> {
    const { password } = await readJson(event, BackupBody, core.config.maxJsonBytes);
    if (!(await core.passwords.verify(developer.passwordHash, password))) throw fail("invalid_credentials", "Wrong password: backups need your developer password again.");
  }
  const auditAll = async (event: H3Event, action: string, details: Record<string, unknown>) => {
    for (const app of await core.db.apps.list()) await auditRequest(core, event, { appId: app.id, action, details });
  };

  router.get("/api/v1/admin/backups", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const isOperator = await core.db.developers.isBackupOperator(developer.id);
    const reason = unsupported(core);
    return { operator: isOperator, unsupported: reason, backups: isOperator && !reason ? listBackups(core) : [], restoreCommand: RESTORE_COMMAND };
  });

  router.post("/api/v1/admin/backups", async (event) => {
    const developer = await operator(event);
    await stepUp(event, developer);
    if (running) throw fail("conflict", "A backup is being written: wait for it to finish.");
    running = true;
    try {
      mkdirSync(dirOf(core), { recursive: true, mode: 0o700 });
      let name = `tenantd-${toIso(core.clock())!.slice(0, 19).replace(/:/g, "-")}.tar.gz`;
      for (let n = 2; existsSync(join(dirOf(core), name)); n++) name = name.replace(/(?:-\d+)?\.tar\.gz$/, `-${n}.tar.gz`);
      const result = await createBackup(core.config.dataDir, join(dirOf(core), name), { includeSecretKey: false, progress: (line) => core.log.debug?.(line) });
      // After the snapshot: the entries say a backup exists, so they are not in it.
      await auditAll(event, "backup.created", { file: name, bytes: result.bytes, secretKeyIncluded: false });
      event.res.status = 201;
      return { backup: listBackups(core).find((b) => b.name === name) };
    } finally {
      running = false;
    }
  });

  // Step one of a download: the password, then a one-use link the browser opens.
  router.post("/api/v1/admin/backups/:name/download-link", async (event) => {
    const developer = await operator(event);
    const name = getRouterParam(event, "name") ?? "";
    if (!NAME.test(name) || !existsSync(join(dirOf(core), name))) throw fail("not_found", `No backup ${name} on this server.`);
    await stepUp(event, developer);
    const now = core.clock();
    for (const [k, l] of links) if (l.expires <= now) links.delete(k);
    const token = newToken("bkd");
    links.set(token, { developerId: developer.id, name, expires: now + LINK_MS });
    noStore(event);
    return { path: `admin/backups/download/${token}`, expiresAt: toIso(now + LINK_MS) };
  });

  router.get("/api/v1/admin/backups/download/:token", async (event) => {
    const developer = await operator(event);
    const token = getRouterParam(event, "token") ?? "";
    const link = links.get(token);
    links.delete(token);
    if (!link || link.developerId !== developer.id || link.expires <= core.clock()) throw fail("not_found", "This download link is unknown, used or expired: ask for a new one (each works once, for a minute).");
    const path = join(dirOf(core), link.name);
    if (!existsSync(path)) throw fail("not_found", `The backup ${link.name} is no longer on this server.`);
    await auditAll(event, "backup.downloaded", { file: link.name });
    return new Response(Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>, {
      headers: {
        "content-type": "application/gzip",
        "content-length": String(statSync(path).size),
        "content-disposition": `attachment; filename="${link.name}"`,
        "cache-control": "no-store",
        "x-content-type-options": "nosniff",
      },
    });
  });
}
