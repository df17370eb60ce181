import { defineCommand } from "citty";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { restoreBackup } from "../backup/archive.ts";
import { asCliError, CliError, exitWith, jsonArg, print } from "./shared.ts";

export default defineCommand({
  meta: { name: "restore", description: "Unpack a backup archive into a data directory, after checking its database's integrity" },
  args: {
    file: { type: "positional", description: "Archive written by tenantd backup", required: true },
    "data-dir": { type: "string", description: "Directory to restore into (new or empty; see --force)", valueHint: "path", required: true },
    force: { type: "boolean", description: "Replace the contents of a non-empty directory (stop the server first)", default: false },
    ...jsonArg,
  },
  async run({ args }) {
    if (process.env.TENANTD_DATABASE_URL) return exitWith(new CliError("TENANTD_DATABASE_URL is set: this server keeps its data in PostgreSQL, and tenantd restore covers SQLite data directories only. Restore PostgreSQL with pg_restore (see docs/scaling.md), and keep the file blobs and secret.key with it."), { json: args.json });
    try {
      const r = await restoreBackup(resolve(args.file), resolve(args["data-dir"]), { force: args.force });
      // The first start on a directory without a key makes a new one, silently: say it now,
      // while the old key can still be put in place.
      const keyFile = join(r.dataDir, "secret.key");
      if (!existsSync(keyFile) && !process.env.TENANTD_SECRET_KEY) {
        process.stderr.write(
          `warning: the archive has no server key, and ${r.dataDir} has no secret.key. Started like this, tenantd makes a new key: ` +
            "stored webhook signing secrets, OAuth client secrets and Stripe keys stay unreadable, and sessions do not survive (every tenant signs in again). " +
            `Before the first start, copy the old server's secret.key to ${keyFile} (mode 600), or set TENANTD_SECRET_KEY to its value.\n`,
        );
      }
      print(args.json, r, () =>
        [
          `restored ${args.file} (taken ${r.createdAt}) into ${r.dataDir}`,
          `  integrity check: ${r.integrity}`,
          `  ${r.counts.apps} apps, ${r.counts.developers} developers, ${r.counts.tenants} tenants, ${r.counts.records} records, ${r.counts.files} files (${r.files} blobs)`,
          r.secretKey ? "  server key: restored" : "  server key: not restored, the backup did not take it (see the warning above)",
          ...(r.skipped.length ? [`  skipped, not what a backup writes: ${r.skipped.join(", ")}`] : []),
          `Start it with: tenantd serve --data-dir ${args["data-dir"]}`,
        ].join("\n"),
      );
    } catch (e) {
      exitWith(asCliError(e), { json: args.json });
    }
  },
});
