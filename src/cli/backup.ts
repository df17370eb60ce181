import { defineCommand } from "citty";
import { resolve } from "node:path";
import { createBackup } from "../backup/archive.ts";
import { dataDirArg, exitWith, jsonArg, print } from "./shared.ts";

export default defineCommand({
  meta: { name: "backup", description: "Write a consistent snapshot of the data directory (database and file blobs) into one .tar.gz, also while the server runs" },
  args: {
    file: { type: "positional", description: "Archive to write, e.g. tenantd-2026-11-23.tar.gz", required: true },
    ...dataDirArg,
    "include-secret-key": { type: "boolean", description: "Also put the server key in the archive (off by default: see the warning)", default: false },
    ...jsonArg,
  },
  async run({ args }) {
    if (process.env.TENANTD_DATABASE_URL) return exitWith(new Error("TENANTD_DATABASE_URL is set: this server keeps its data in PostgreSQL, and tenantd backup covers SQLite data directories only. Back PostgreSQL up with pg_dump (see docs/scaling.md), and keep the file blobs and secret.key with it."));
    const dataDir = resolve(args["data-dir"] ?? process.env.TENANTD_DATA_DIR ?? ".tenantd");
    const log = (line: string) => process.stderr.write(line + "\n");
    try {
      const result = await createBackup(dataDir, resolve(args.file), { includeSecretKey: args["include-secret-key"], progress: log });
      if (result.secretKey) {
        log("warning: this archive holds the server key. With it, anyone can read the stored secrets (webhook signing secrets, OAuth client secrets, Stripe keys) and sign tenant access tokens: keep the archive as safe as the server.");
      } else {
        log("note: the server key is not in this archive. Keep secret.key (or TENANTD_SECRET_KEY) safe separately: without it, a restored server cannot read stored webhook, OAuth and Stripe secrets, and every tenant signs in again.");
      }
      print(args.json, result, () => `backup written: ${result.file} (${result.bytes} bytes; database and ${result.files} file blobs${result.secretKey ? "; server key included" : ""})`);
    } catch (e) {
      exitWith(e);
    }
  },
});
