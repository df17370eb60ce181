import { defineCommand } from "citty";
import { resolve } from "node:path";
import { restoreBackup } from "../backup/archive.ts";
import { exitWith, jsonArg, print } from "./shared.ts";

export default defineCommand({
  meta: { name: "restore", description: "Unpack a backup archive into a data directory, after checking its database's integrity" },
  args: {
    file: { type: "positional", description: "Archive written by tenantd backup", required: true },
    "data-dir": { type: "string", description: "Directory to restore into (new or empty; see --force)", valueHint: "path", required: true },
    force: { type: "boolean", description: "Replace the contents of a non-empty directory (stop the server first)", default: false },
    ...jsonArg,
  },
  async run({ args }) {
    if (process.env.TENANTD_DATABASE_URL) return exitWith(new Error("TENANTD_DATABASE_URL is set: this server keeps its data in PostgreSQL, and tenantd restore covers SQLite data directories only. Restore PostgreSQL with pg_restore (see docs/scaling.md), and keep the file blobs and secret.key with it."));
    try {
      const r = await restoreBackup(resolve(args.file), resolve(args["data-dir"]), { force: args.force });
      print(args.json, r, () =>
        [
          `restored ${args.file} (taken ${r.createdAt}) into ${r.dataDir}`,
          `  integrity check: ${r.integrity}`,
          `  ${r.counts.apps} apps, ${r.counts.developers} developers, ${r.counts.tenants} tenants, ${r.counts.records} records, ${r.counts.files} files (${r.files} blobs)`,
          r.secretKey ? "  server key: restored" : "  server key: not restored (the backup did not take it). Put the old secret.key in the directory (or set TENANTD_SECRET_KEY) before starting, or stored secrets stay unreadable.",
          ...(r.skipped.length ? [`  skipped, not what a backup writes: ${r.skipped.join(", ")}`] : []),
          `Start it with: tenantd serve --data-dir ${args["data-dir"]}`,
        ].join("\n"),
      );
    } catch (e) {
      exitWith(e);
    }
  },
});
