import { defineCommand } from "citty";
import { existsSync, mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { createBackup } from "../backup/archive.ts";
import { asCliError, CliError, dataDirArg, exitWith, jsonArg, openCore, print } from "./shared.ts";
import { auditEveryApp } from "../audit/actions.ts";

export default defineCommand({
  meta: { name: "backup", description: "Write a consistent snapshot of the data directory (database and file blobs) into one .tar.gz, also while the server runs" },
  args: {
    file: { type: "positional", description: "Archive to write, e.g. tenantd-2026-11-23.tar.gz", required: true },
    ...dataDirArg,
    "include-secret-key": { type: "boolean", description: "Also put the server key in the archive (off by default: see the warning)", default: false },
    ...jsonArg,
  },
  async run({ args }) {
    if (process.env.TENANTD_DATABASE_URL) return exitWith(new CliError("TENANTD_DATABASE_URL is set: this server keeps its data in PostgreSQL, and tenantd backup covers SQLite data directories only. Back PostgreSQL up with pg_dump (see docs/scaling.md), and keep the file blobs and secret.key with it."), { json: args.json });
    const dataDir = resolve(args["data-dir"] ?? process.env.TENANTD_DATA_DIR ?? ".tenantd");
    const log = (line: string) => process.stderr.write(line + "\n");
    const target = resolve(args.file);
    try {
      // The archive's folder may be a new dated one (backups/2026-11-28/): make it, private
      // like the archive, rather than fail halfway through writing.
      if (!existsSync(dirname(target))) {
        mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
        log(`backup: created the directory ${dirname(target)}`);
      }
      const result = await createBackup(dataDir, target, { includeSecretKey: args["include-secret-key"], progress: log });
      // After the snapshot: the entry says a backup exists, so it is not in that backup itself.
      const core = await openCore({ "data-dir": dataDir });
      await auditEveryApp(core, "backup.created", { file: result.file, bytes: result.bytes, secretKeyIncluded: result.secretKey }).finally(() => core.close());
      if (result.secretKey) {
        log("warning: this archive holds the server key. With it, anyone can read the stored secrets (webhook signing secrets, OAuth client secrets, Stripe keys) and sign tenant access tokens: keep the archive as safe as the server.");
      } else {
        log("note: the server key is not in this archive. Keep secret.key (or TENANTD_SECRET_KEY) safe separately: without it, a restored server cannot read stored webhook, OAuth and Stripe secrets, and every tenant signs in again.");
      }
      print(args.json, result, () => `backup written: ${result.file} (${result.bytes} bytes; database and ${result.files} file blobs${result.secretKey ? "; server key included" : ""})`);
    } catch (e) {
      exitWith(asCliError(e), { json: args.json });
    }
  },
});
