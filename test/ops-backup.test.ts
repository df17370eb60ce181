import { describe, expect, it } from "vitest";
import { createReadStream, createWriteStream, readFileSync, writeFileSync, existsSync } from "node:fs";
import { pipeline } from "node:stream/promises";
import { createGunzip, createGzip } from "node:zlib";
import { extract, pack } from "tar-stream";
import { dirname, join } from "node:path";
import { createTenantBackend } from "../src/index.ts";
import { buildRequest, startBackend, tempDir, toReply, TEST_ARGON2 } from "./_helpers.ts";
import { serve, spawnCli } from "./_serve.ts";

async function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnCli(args, env);
  const { code } = await r.exited;
  return { code, stdout: r.stdout(), stderr: r.stderr() };
}

// Backup and restore copy the SQLite file, so this file runs in the sqlite project only
// (vitest.config.ts). On PostgreSQL both refuse and point at pg_dump / pg_restore:
// postgres-cli.test.ts ("config print names the source and hides the URL's password; backup
// refuses and points at pg_dump").
describe("tenantd backup and restore", () => {
  it("a backup taken while 500 records are being written restores every record acknowledged before it started, integrity check passing", async () => {
    const dataDir = tempDir();
    const s = await serve(dataDir, ["--no-access-log"]);
    const key = /publishable key:\s+(\S+)/.exec(s.stdout())![1]!;
    const appId = /app id:\s+(\S+)/.exec(s.stdout())![1]!;
    const signup = await fetch(buildRequest(s.url, "POST", "/api/v1/auth/signup", { key, body: { email: "b@example.com", password: "a long password" } }));
    const { accessToken } = (await signup.json()) as { accessToken: string };

    const form = new FormData();
    form.append("file", new Blob([Buffer.from("backed-up bytes")], { type: "text/plain" }), "note.txt");
    const uploaded = await fetch(`${s.url}/api/v1/files/upload`, { method: "POST", headers: { authorization: `Bearer ${accessToken}`, "x-service-app": appId }, body: form });
    expect(uploaded.status).toBe(201);
    const fileUrl = new URL(((await uploaded.json()) as { file: { url: string } }).file.url);

    const acknowledged: string[] = [];
    let ackedAtBackupStart: string[] | undefined;
    let backup: Promise<Awaited<ReturnType<typeof run>>> | undefined;
    const archive = join(tempDir(), "snap.tar.gz");
    // Four writers; the backup starts once 250 writes are acknowledged, while they keep going.
    const writer = async () => {
      while (acknowledged.length < 500) {
        const res = await fetch(buildRequest(s.url, "POST", "/api/v1/data/notes", { bearer: { accessToken, appId }, body: { data: { n: acknowledged.length } } }));
        expect(res.status).toBe(201);
        acknowledged.push(((await res.json()) as { record: { id: string } }).record.id);
        if (acknowledged.length >= 250 && !backup) {
          ackedAtBackupStart = [...acknowledged];
          backup = run(["backup", archive, "--data-dir", dataDir]);
        }
      }
    };
    await Promise.all([writer(), writer(), writer(), writer()]);
    const made = await backup!;
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toContain(`backup written: ${archive}`);
    expect(made.stderr).toMatch(/backup: database snapshot taken/);
    expect(made.stderr).toContain("the server key is not in this archive");

    const restored = join(tempDir(), "restored");
    const r = await run(["restore", archive, "--data-dir", restored]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("integrity check: ok");
    expect(r.stdout).toMatch(/1 tenants, \d+ records/);
    const count = Number(/(\d+) records/.exec(r.stdout)![1]);
    expect(count).toBeGreaterThanOrEqual(ackedAtBackupStart!.length);

    const b = await createTenantBackend({ dataDir: restored, logger: "silent", argon2: TEST_ARGON2, email: { transport: "outbox" } });
    try {
      const login = await toReply(await b.fetch(buildRequest("http://x", "POST", "/api/v1/auth/login", { key, body: { email: "b@example.com", password: "a long password" } })));
      expect(login.status).toBe(200);
      const list = await toReply(await b.fetch(buildRequest("http://x", "GET", "/api/v1/data/notes?limit=1000", { bearer: { accessToken: login.body.accessToken, appId } })));
      const ids = new Set((list.body.records as { id: string }[]).map((x) => x.id));
      for (const id of ackedAtBackupStart!) expect(ids.has(id), id).toBe(true);
      // The file's blob came along with its row.
      const blob = await b.fetch(new Request(`http://x${fileUrl.pathname}`));
      expect(blob.status).toBe(200);
      expect(await blob.text()).toBe("backed-up bytes");
    } finally {
      await b.close();
    }
  });

  it("restore refuses a non-empty directory unless --force, and leaves it untouched", async () => {
    const dataDir = tempDir();
    const s = await serve(dataDir);
    s.child.kill("SIGTERM");
    await s.exited;
    const archive = join(tempDir(), "b.tar.gz");
    expect((await run(["backup", archive, "--data-dir", dataDir, "--include-secret-key"])).stderr).toContain("this archive holds the server key");

    const target = tempDir();
    writeFileSync(join(target, "keep.txt"), "mine");
    const refused = await run(["restore", archive, "--data-dir", target]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("is not empty");
    expect(refused.stderr).toContain("--force");
    expect(readFileSync(join(target, "keep.txt"), "utf8")).toBe("mine");
    expect(existsSync(join(target, "tenantd.db"))).toBe(false);

    const forced = await run(["restore", archive, "--data-dir", target, "--force"]);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain("server key: restored");
    expect(readFileSync(join(target, "secret.key"), "utf8")).toBe(readFileSync(join(dataDir, "secret.key"), "utf8"));
    expect(existsSync(join(target, "keep.txt"))).toBe(false);
  });

  it("restore refuses a file that is not a backup archive; backup refuses a directory without a database", async () => {
    const junk = join(tempDir(), "junk.tar.gz");
    writeFileSync(junk, "not an archive");
    const target = join(tempDir(), "new");
    const r = await run(["restore", junk, "--data-dir", target]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("is not a tenantd backup archive");
    expect(existsSync(target)).toBe(false);
    const missing = await run(["backup", join(tempDir(), "x.tar.gz"), "--data-dir", join(tempDir(), "nothing")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no tenantd data directory");
  });

  it("restore writes only what a backup writes: a secret.key the manifest does not list, other names and names that climb out are skipped and reported; a name given twice is refused (issue 39)", async () => {
    const dataDir = tempDir();
    const backend = await createTenantBackend({ dataDir, logger: "silent", argon2: TEST_ARGON2 });
    await backend.close();
    const archive = join(tempDir(), "b.tar.gz");
    expect((await run(["backup", archive, "--data-dir", dataDir])).code).toBe(0);
    const entries = await readArchive(archive);
    expect(entries.map((e) => e.name).sort()).toEqual(["tenantd-backup.json", "tenantd.db"]);

    const outside = tempDir();
    const crafted = join(tempDir(), "crafted.tar.gz");
    const planted = "ab".repeat(32);
    await writeArchive(crafted, [
      ...entries,
      { name: "secret.key", data: Buffer.from(planted + "\n") },
      { name: "run-me.sh", data: Buffer.from("#!/bin/sh\n") },
      { name: `files/../../${outside.split("/").pop()}/escaped.txt`, data: Buffer.from("x") },
    ]);
    const target = join(tempDir(), "restored");
    const restored = await run(["restore", crafted, "--data-dir", target]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toContain("server key: not restored");
    expect(restored.stdout).toMatch(/skipped, not what a backup writes: .*run-me\.sh.*escaped\.txt.*secret\.key/);
    expect(existsSync(join(target, "secret.key"))).toBe(false);
    expect(existsSync(join(target, "run-me.sh"))).toBe(false);
    expect(existsSync(join(outside, "escaped.txt"))).toBe(false);
    expect(existsSync(join(target, "tenantd.db"))).toBe(true);

    const twice = join(tempDir(), "twice.tar.gz");
    await writeArchive(twice, [...entries, entries.find((e) => e.name === "tenantd.db")!]);
    const refused = await run(["restore", twice, "--data-dir", join(tempDir(), "t2")]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("tenantd.db is in the archive twice");
  });
});

describe("backup and restore, as a newcomer meets them", () => {
  it("a backup is an operator's entry in every app's audit trail, written after the snapshot", async () => {
    const t = await startBackend();
    const other = await t.backend.admin.createApp({ name: "second" });
    await t.backend.close();
    const archive = join(tempDir(), "audited.tar.gz");
    const made = await run(["backup", archive, "--data-dir", t.dataDir]);
    expect(made.code, made.stderr).toBe(0);
    const reopened = await createTenantBackend({ dataDir: t.dataDir, logger: "silent", argon2: TEST_ARGON2, bootstrap: false });
    try {
      for (const appId of [t.app.id, other.id]) {
        const { entries } = await reopened.admin.listAudit(appId, { action: "backup.created" });
        expect(entries).toHaveLength(1);
        expect(entries[0]).toMatchObject({ actor: { type: "operator" }, details: { file: archive, secretKeyIncluded: false } });
      }
    } finally {
      await reopened.close();
    }
  });

  it("backup makes a missing directory; a restore without the key says what will not survive; failures honour --json", async () => {
    const t = await startBackend();
    await t.backend.close();
    const archive = join(tempDir(), "backups", "2026-11-28", "snap.tar.gz");
    const made = await run(["backup", archive, "--data-dir", t.dataDir]);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stderr).toContain(`backup: created the directory ${dirname(archive)}`);
    expect(existsSync(archive)).toBe(true);

    const target = join(tempDir(), "restored");
    const restored = await run(["restore", archive, "--data-dir", target, "--json"]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ secretKey: false });
    expect(restored.stderr).toContain("warning: the archive has no server key");
    expect(restored.stderr).toContain("sessions do not survive (every tenant signs in again)");
    expect(restored.stderr).toContain(`copy the old server's secret.key to ${join(target, "secret.key")}`);
    expect(restored.stderr).toContain("TENANTD_SECRET_KEY");
    // With the key in place (or in the environment) there is nothing to warn about.
    const withKey = await run(["restore", archive, "--data-dir", join(tempDir(), "again")], { TENANTD_SECRET_KEY: "ab".repeat(32) });
    expect(withKey.code, withKey.stderr).toBe(0);
    expect(withKey.stderr).not.toContain("warning");

    const noData = await run(["backup", join(tempDir(), "x.tar.gz"), "--data-dir", join(tempDir(), "nothing"), "--json"]);
    expect(noData.code).toBe(1);
    expect(JSON.parse(noData.stdout)).toEqual({ error: "invalid_request", message: expect.stringContaining("no tenantd data directory") });
    expect(noData.stderr).not.toMatch(/\n\s+at /);
    const junk = join(tempDir(), "junk.tar.gz");
    writeFileSync(junk, "not an archive");
    const notArchive = await run(["restore", junk, "--data-dir", join(tempDir(), "new"), "--json"]);
    expect(notArchive.code).toBe(1);
    expect(JSON.parse(notArchive.stdout)).toEqual({ error: "invalid_request", message: expect.stringContaining("is not a tenantd backup archive") });
  });
});

async function readArchive(file: string): Promise<{ name: string; data: Buffer }[]> {
  const entries: { name: string; data: Buffer }[] = [];
  const unpack = extract();
  unpack.on("entry", (header, stream, next) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c) => chunks.push(c as Buffer));
    stream.on("end", () => {
      entries.push({ name: header.name, data: Buffer.concat(chunks) });
      next();
    });
  });
  await pipeline(createReadStream(file), createGunzip(), unpack);
  return entries;
}

async function writeArchive(file: string, entries: { name: string; data: Buffer }[]): Promise<void> {
  const tar = pack();
  const done = pipeline(tar, createGzip(), createWriteStream(file));
  for (const e of entries) tar.entry({ name: e.name, size: e.data.length }, e.data);
  tar.finalize();
  await done;
}
