import { existsSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError, promptSecret } from "./shared.ts";
import { postgresTarget } from "../db/moved.ts";

/** One end of `store copy` as named on the command line. */
export type Side =
  | { kind: "sqlite"; flag: string; dir: string; label: string }
  | { kind: "postgres"; flag: string; url: string; label: string; fromArgv: boolean };

const POSTGRES_URL = /^postgres(ql)?:\/\//i;

/** The URL as it may be printed: without its password. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(a URL that does not parse)";
  }
}

/**
 * `--from`/`--to`: a data directory, a PostgreSQL URL, `env:NAME` (the URL or path in that
 * environment variable) or `-` (read from stdin). The last two keep a password out of argv,
 * which every user of the machine can read in `ps`.
 */
export async function readSide(flag: string, raw: string): Promise<Side> {
  let value = raw.trim();
  let fromArgv = true;
  if (value === "-") {
    value = (await promptSecret(`PostgreSQL URL or data directory for ${flag}: `)).trim();
    fromArgv = false;
    if (!value) throw new CliError(`${flag} -: nothing came on stdin. Pipe the URL in (e.g. \`printenv TENANTD_DATABASE_URL | tenantd store copy … ${flag} -\`), or use ${flag} env:NAME.`);
  } else if (/^env:/i.test(value)) {
    const name = value.slice(4);
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new CliError(`${flag} ${value}: env: must be followed by an environment variable name, e.g. ${flag} env:TENANTD_DATABASE_URL.`);
    const found = process.env[name];
    if (!found) throw new CliError(`${flag} env:${name}: the environment variable ${name} is not set (or empty). Export it in this shell, or give ${flag} a data directory.`);
    value = found.trim();
    fromArgv = false;
  }
  if (POSTGRES_URL.test(value)) {
    if (!URL.canParse(value)) throw new CliError(`${flag}: not a valid PostgreSQL URL; expected postgres://user:password@host:5432/database.`);
    return { kind: "postgres", flag, url: value, label: redactUrl(value), fromArgv };
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) {
    throw new CliError(`${flag}: ${redactUrl(value)} is neither a PostgreSQL URL (postgres://…) nor a data directory.`);
  }
  const dir = resolve(value);
  return { kind: "sqlite", flag, dir, label: dir };
}

/** A source data directory must hold a database; a mistyped path is not an empty store. */
export function requireSourceDir(side: Side): void {
  if (side.kind !== "sqlite") return;
  if (!existsSync(join(side.dir, "tenantd.db"))) {
    throw new CliError(`${side.flag} ${side.dir}: no tenantd data directory there (no tenantd.db). Point ${side.flag} at the directory the server runs with (its --data-dir or TENANTD_DATA_DIR).`);
  }
}

function samePostgres(a: string, b: string): boolean {
  return postgresTarget(a) === postgresTarget(b);
}

const real = (dir: string) => (existsSync(dir) ? realpathSync(dir) : dir);

export function refuseSame(from: Side, to: Side): void {
  const same =
    from.kind === "sqlite" && to.kind === "sqlite" ? real(from.dir) === real(to.dir) : from.kind === "postgres" && to.kind === "postgres" ? samePostgres(from.url, to.url) : false;
  if (same) throw new CliError(`--from and --to name the same store (${from.label}): copy into a new data directory or another database.`);
}
