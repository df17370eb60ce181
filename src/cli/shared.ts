import { HTTPError } from "h3";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import * as v from "valibot";
import { createCore, type Core } from "../core.ts";
import { ConfigError } from "../config.ts";

/** Arguments every command that touches a data directory takes. */
export const dataDirArg = {
  "data-dir": {
    type: "string",
    description: "Data directory (SQLite file, blobs, server key). Env TENANTD_DATA_DIR; default ./.tenantd",
    valueHint: "path",
  },
} as const;

/** How every command inside an app names it. */
export const appArg = {
  app: { type: "string", description: "App id or name", required: true, valueHint: "app" },
} as const;

/** How every command on one tenant names it: a positional id or email. */
export const tenantArg = {
  tenant: { type: "positional", description: "Tenant id or email", required: true },
} as const;

export const jsonArg = {
  json: { type: "boolean", description: "Print JSON (for scripts)", default: false },
} as const;

/**
 * Opens the data directory directly, as the server does; no server has to run. Only the
 * commands that may start a data directory create one: a mistyped path is an error, not a
 * new empty directory.
 */
export async function openCore(args: { "data-dir"?: string }, opts: { create?: boolean } = {}): Promise<Core> {
  const dataDir = resolve(args["data-dir"] ?? process.env.TENANTD_DATA_DIR ?? ".tenantd");
  // On PostgreSQL (TENANTD_DATABASE_URL) the data lives in the database, not in tenantd.db.
  if (!process.env.TENANTD_DATABASE_URL && !existsSync(join(dataDir, "tenantd.db"))) {
    if (!opts.create) {
      throw new CliError(`no tenantd data directory at ${dataDir} (no tenantd.db there). Start the server once with \`tenantd serve\`, or point --data-dir (or TENANTD_DATA_DIR) at the server's data directory.`);
    }
    process.stderr.write(`tenantd: creating a new data directory at ${dataDir}\n`);
  }
  const core = createCore({ dataDir, logger: "error", bootstrap: false });
  // Links the CLI builds use the URL the server last announced, unless one is set here.
  const announced = process.env.TENANTD_PUBLIC_URL ? undefined : await core.db.meta.get(PUBLIC_URL_KEY);
  if (announced) core.config.publicUrl = announced;
  return core;
}

/** Where `tenantd serve` records the public URL it hands out links with. */
export const PUBLIC_URL_KEY = "public_url";

/** Runs a command body with the core open, closing it after, and turns failures into a readable line. */
export async function withCore<T>(
  args: { "data-dir"?: string; json?: boolean },
  fn: (core: Core) => Promise<T>,
  opts: { create?: boolean; flags?: Record<string, string> } = {},
): Promise<T> {
  let core: Core | undefined;
  try {
    core = await openCore(args, opts);
    return await fn(core);
  } catch (e) {
    await core?.close();
    return exitWith(e, { json: args.json, flags: opts.flags });
  } finally {
    await core?.close();
  }
}

/** Where the core points at an HTTP route, the CLI points at its own command. */
const API_HINTS: [RegExp, string][] = [
  [/List plans with GET \/api\/v1\/billing\/plans\./, "List them with: tenantd plan list --app <app>"],
  [/list them with GET \/api\/v1\/admin\/apps\/[^/\s]+\/webhook-deliveries/, "list them with: tenantd webhook deliveries --app <app>"],
];

const kebab = (s: string) => s.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/**
 * Prints the failure in the CLI's words and exits 1: `tenantd: <message>` on stderr, or with
 * `--json` a `{ error, message }` object on stdout (the shape the HTTP API answers with).
 * The core speaks of body fields (`body.slug`); here they are the flags that set them
 * (`--slug`), by `flags` or else the field name in kebab case.
 */
export function exitWith(e: unknown, opts: { json?: boolean; flags?: Record<string, string> } = {}): never {
  let message = e instanceof Error ? e.message : String(e);
  if (HTTPError.isError(e) || v.isValiError(e)) {
    message = message.replace(/\bbody\.([A-Za-z][A-Za-z0-9]*)/g, (_, field: string) => opts.flags?.[field] ?? `--${kebab(field)}`);
    for (const [api, cli] of API_HINTS) message = message.replace(api, cli);
  }
  const code = HTTPError.isError(e)
    ? ((e.body as { error?: string } | undefined)?.error ?? "invalid_request")
    : e instanceof CliError || e instanceof ConfigError || v.isValiError(e)
      ? "invalid_request"
      : "internal_error";
  if (opts.json) process.stdout.write(JSON.stringify({ error: code, message }, null, 2) + "\n");
  else process.stderr.write(`tenantd: ${message}\n`);
  process.exit(1);
}

export class CliError extends Error {}

/**
 * The archive code (src/backup) throws plain Errors for what the person gave it (a missing
 * data directory, a file that is no backup, a non-empty target); Node's own failures carry a
 * `code` (EACCES, ENOSPC) and stay internal errors.
 */
export const asCliError = (e: unknown): unknown => (e instanceof Error && e.constructor === Error && !("code" in e) ? new CliError(e.message) : e);

export function print(json: boolean, data: unknown, human: () => string): void {
  process.stdout.write(json ? JSON.stringify(data, null, 2) + "\n" : human() + "\n");
}

/**
 * Reads a secret from the terminal without echo, or from piped stdin: its first line, or all of
 * it with `whole` (a JSON document may span lines).
 */
export async function promptSecret(question: string, opts: { whole?: boolean } = {}): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const chunks: Buffer[] = [];
    for await (const chunk of stdin) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    return opts.whole ? text : (text.split(/\r?\n/)[0] ?? "");
  }
  process.stderr.write(question);
  stdin.setRawMode(true);
  stdin.resume();
  return new Promise((resolve) => {
    let value = "";
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString("utf8")) {
        if (ch === "\r" || ch === "\n") {
          stdin.setRawMode(false);
          stdin.pause();
          stdin.off("data", onData);
          process.stderr.write("\n");
          resolve(value);
          return;
        }
        if (ch === "\u0003") process.exit(130);
        value = ch === "\u007f" ? value.slice(0, -1) : value + ch;
      }
    };
    stdin.on("data", onData);
  });
}

/**
 * A flag that may carry a secret: `-` reads it from stdin (without echo on a terminal) so it
 * stays out of argv, shell history and `ps`.
 */
export async function secretFlag(value: string | undefined, question: string, opts: { whole?: boolean } = {}): Promise<string | undefined> {
  return value === "-" ? promptSecret(question, opts) : value;
}

/** A comma-separated flag value as a list (undefined when the flag was not given). */
export const commaList = (s: string | undefined) => (s === undefined ? undefined : s.split(",").map((x) => x.trim()).filter(Boolean));
