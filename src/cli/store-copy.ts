import { defineCommand } from "citty";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../config-file.ts";
import type { TenantBackendConfig } from "../config.ts";
import type { CopyEnd } from "../db/copy/end.ts";
import { openPostgresCopyEnd } from "../db/copy/postgres.ts";
import { compareCounts, copyTables, DEFAULT_BATCH, emptyTarget, targetContents } from "../db/copy/run.ts";
import { openSqliteCopyEnd } from "../db/copy/sqlite.ts";
import { CliError, exitWith, jsonArg, print } from "./shared.ts";
import { markMoved, unmarkMoved } from "../db/moved.ts";
import { copyBlobs } from "./store-blobs.ts";
import { settleServerKey, sideStorage } from "./store-config.ts";
import { buildTargetIndexes, checkSourceKey } from "./store-finish.ts";
import { stderrProgress } from "./store-progress.ts";
import { readSide, refuseSame, requireSourceDir, type Side } from "./store-sides.ts";

const SIDE_HELP = "a SQLite data directory, env:NAME (a PostgreSQL URL in that environment variable), - (the URL on stdin), or a postgres:// URL (visible in ps: prefer the first two)";

/** Opens one side, in the CLI's words when it cannot: which flag, where, and never the password. */
async function openEnd(side: Side): Promise<CopyEnd> {
  try {
    if (side.kind === "sqlite") {
      mkdirSync(side.dir, { recursive: true, mode: 0o700 });
      return openSqliteCopyEnd(join(side.dir, "tenantd.db"), side.label);
    }
    return await openPostgresCopyEnd(side.url, side.label);
  } catch (e) {
    let message = e instanceof Error ? e.message : String(e);
    if (side.kind === "postgres") {
      const password = new URL(side.url).password;
      message = message.split(side.url).join(side.label);
      if (password) message = message.split(decodeURIComponent(password)).join("***").split(password).join("***");
    }
    throw new CliError(`cannot open ${side.flag} ${side.label}: ${message}`);
  }
}

function refuseNonEmpty(to: Side, found: Awaited<ReturnType<typeof targetContents>>): never {
  const what = found.tables.map((t) => `${t.table} (${t.rows})`).join(", ");
  const unfinished = found.unfinishedCopy ? (JSON.parse(found.unfinishedCopy) as { startedAt?: string; from?: string }) : null;
  throw new CliError(
    unfinished
      ? `--to ${to.label} holds an unfinished copy (started ${unfinished.startedAt} from ${unfinished.from}; rows in ${what || "no table"}). Run the same command again with --restart: it empties the target and copies from scratch.`
      : `--to ${to.label} is not empty: it holds rows in ${what}. store copy fills an empty store only: point --to at a new data directory or an empty database, or add --restart to delete everything tenantd keeps there first (this cannot be undone).`,
  );
}

export default defineCommand({
  meta: {
    name: "copy",
    description: "Copy a whole store (every table, file blobs) between SQLite and PostgreSQL into an empty target; stop writes to the source first",
  },
  args: {
    from: { type: "string", description: `Source: ${SIDE_HELP}`, required: true, valueHint: "dir|env:NAME|-|url" },
    to: { type: "string", description: `Target, empty or new: ${SIDE_HELP}`, required: true, valueHint: "dir|env:NAME|-|url" },
    "from-files": { type: "string", description: "Directory of the source's file blobs. Default: <from>/files for a data directory, the configured storage for PostgreSQL", valueHint: "dir" },
    "to-files": { type: "string", description: "Directory for the target's file blobs. Default: <to>/files for a data directory, the configured storage for PostgreSQL", valueHint: "dir" },
    "skip-files": { type: "boolean", description: "Leave the blobs where they are (both sides share one storage, e.g. one S3 bucket); only check the target storage holds each", default: false },
    config: { type: "string", description: "Config file describing the PostgreSQL side's server (data dir, server key, storage), as for serve. Env TENANTD_CONFIG", valueHint: "path" },
    restart: { type: "boolean", description: "Empty the target first (after an unfinished copy): deletes every row tenantd keeps there", default: false },
    "batch-size": { type: "string", description: `Rows per batch (default ${DEFAULT_BATCH})`, valueHint: "rows" },
    ...jsonArg,
  },
  async run({ args }) {
    const opened: CopyEnd[] = [];
    let partial = false;
    try {
      if (args.from.trim() === "-" && args.to.trim() === "-") throw new CliError("only one of --from and --to can read stdin (-); give the other as env:NAME or a data directory.");
      const batch = args["batch-size"] === undefined ? DEFAULT_BATCH : Number(args["batch-size"]);
      if (!Number.isInteger(batch) || batch < 1 || batch > 100_000) throw new CliError(`--batch-size must be a whole number from 1 to 100000; got ${JSON.stringify(args["batch-size"])}.`);
      const from = await readSide("--from", args.from);
      const to = await readSide("--to", args.to);
      requireSourceDir(from);
      refuseSame(from, to);
      for (const side of [from, to]) {
        if (side.kind === "postgres" && side.fromArgv && new URL(side.url).password) {
          process.stderr.write(`tenantd: note: the password in ${side.flag} is visible to every user of this machine (ps) while this runs; next time pass ${side.flag} env:NAME or ${side.flag} -.\n`);
        }
      }
      const configured: TenantBackendConfig = (await loadConfig({ config: args.config }, process.env)).config;

      const source = await openEnd(from);
      opened.push(source);
      const target = await openEnd(to);
      opened.push(target);
      const found = await targetContents(target);
      if (found.tables.length > 0 || found.unfinishedCopy) {
        if (!args.restart) refuseNonEmpty(to, found);
        await emptyTarget(target);
      }
      const { key, note } = settleServerKey(from, to, configured);
      await checkSourceKey(source, key);
      const fromFiles = sideStorage(from, args["from-files"], configured, key);
      const toFiles = sideStorage(to, args["to-files"], configured, key);
      const shared = fromFiles.dir !== null && fromFiles.dir === toFiles.dir;

      const log = (line: string) => process.stderr.write(line + "\n");
      log(`copying ${from.label} (${from.kind === "sqlite" ? "SQLite" : "PostgreSQL"}) → ${to.label} (${to.kind === "sqlite" ? "SQLite" : "PostgreSQL"})`);
      log(note);
      const started = Date.now();
      const progress = stderrProgress();
      await source.snapshot();
      partial = true;
      await copyTables(source, target, { batch, progress, describe: from.label });
      partial = false;
      const blobsStarted = Date.now();
      const blobs = await copyBlobs(source, fromFiles.storage, toFiles.storage, { skip: args["skip-files"] || shared, batch, progress: progress.blobs });
      progress.blobsDone(blobs.copied, blobs.bytes, Date.now() - blobsStarted);
      const counts = await compareCounts(source, target);
      for (const end of opened.splice(0)) await end.close();
      await Promise.all([fromFiles.close(), toFiles.close()]);
      const ok = counts.every((c) => c.ok) && blobs.ok;
      // A directory copied into is live again; one moved to PostgreSQL refuses to start on its old file.
      if (to.kind === "sqlite") unmarkMoved(to.dir);
      const indexes = await buildTargetIndexes(to, configured, key);
      const seconds = (Date.now() - started) / 1000;
      const moved = ok && from.kind === "sqlite" && to.kind === "postgres" ? markMoved(from.dir, to.url, new Date()) : null;

      print(args.json, { from: from.label, to: to.label, tables: counts, blobs: { ...blobs, from: fromFiles.label, to: toFiles.label }, indexes, serverKey: note, movedMarker: moved, seconds, ok }, () => {
        const width = Math.max(...counts.map((c) => c.table.length), 10);
        const lines = [`${"table".padEnd(width)}  ${"source".padStart(9)}  ${"target".padStart(9)}  ok`];
        for (const c of counts) lines.push(`${c.table.padEnd(width)}  ${String(c.source).padStart(9)}  ${String(c.target).padStart(9)}  ${c.ok ? "ok" : "DIFFERENT"}`);
        const blobTarget = blobs.skipped ? blobs.files - blobs.missing.length : blobs.copied;
        lines.push(`${"file blobs".padEnd(width)}  ${String(blobs.files).padStart(9)}  ${String(blobTarget).padStart(9)}  ${blobs.ok ? "ok" : "DIFFERENT"}`);
        lines.push("");
        lines.push(`blobs: ${blobs.skipped ? `left in place (${toFiles.label}); checked` : `${fromFiles.label} → ${toFiles.label}, size and SHA-256 checked`}`);
        lines.push(`record indexes: ${indexes} declared indexes built on the target`);
        if (moved) lines.push(`${from.label} now refuses to start on its SQLite file (${moved}): run tenantd with TENANTD_DATABASE_URL set to the target`);
        lines.push(`${ok ? "copied" : "copy FAILED"} in ${seconds.toFixed(1)} s`);
        return lines.join("\n");
      });
      if (!ok) {
        const problems = [
          ...counts.filter((c) => !c.ok).map((c) => `${c.table} has ${c.target} rows on the target, ${c.source} on the source`),
          ...(blobs.missing.length ? [`${blobs.missing.length} blobs missing from ${blobs.skipped ? toFiles.label : fromFiles.label} (e.g. ${blobs.missing.slice(0, 3).join(", ")})`] : []),
          ...(blobs.mismatched.length ? [`${blobs.mismatched.length} blobs differ after the copy (e.g. ${blobs.mismatched.slice(0, 3).join(", ")})`] : []),
        ];
        throw new CliError(`the copy does not match its source: ${problems.join("; ")}. Fix the cause, then run again with --restart.`);
      }
    } catch (e) {
      for (const end of opened) await end.close().catch(() => undefined);
      if (partial && !(e instanceof CliError)) {
        e = new Error(`${e instanceof Error ? e.message : String(e)}. The target holds a partial copy: once the cause is fixed, run the same command with --restart.`);
      }
      exitWith(e, { json: args.json });
    }
  },
});
