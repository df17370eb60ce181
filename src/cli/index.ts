import "./no-color.ts";
import { defineCommand, runCommand, showUsage, type CommandDef } from "citty";
import { createRequire } from "node:module";
import { resolveCommand, unknownFlag } from "./flags.ts";
import { CliError, exitWith } from "./shared.ts";

const { version } = createRequire(import.meta.url)("../../package.json") as { version: string };

export const main = defineCommand({
  meta: { name: "tenantd", version, description: "Self-hostable backend for apps: auth, records, files, billing, webhooks" },
  subCommands: {
    serve: () => import("./serve.ts").then((m) => m.default),
    app: () => import("./app.ts").then((m) => m.default),
    developer: () => import("./developer.ts").then((m) => m.default),
    tenant: () => import("./tenant.ts").then((m) => m.default),
    collection: () => import("./collection.ts").then((m) => m.default),
    oauth: () => import("./oauth.ts").then((m) => m.default),
    mail: () => import("./mail.ts").then((m) => m.default),
    webhook: () => import("./webhook.ts").then((m) => m.default),
    plan: () => import("./plan.ts").then((m) => m.default),
    billing: () => import("./billing.ts").then((m) => m.default),
    config: () => import("./config.ts").then((m) => m.default),
    backup: () => import("./backup.ts").then((m) => m.default),
    restore: () => import("./restore.ts").then((m) => m.default),
    store: () => import("./store.ts").then((m) => m.default),
    audit: () => import("./audit.ts").then((m) => m.default),
    org: () => import("./org.ts").then((m) => m.default),
  },
});

/**
 * Runs the command line. Unlike citty's runMain, a mistake never dumps the whole help: it
 * says what was wrong in the CLI's own words, offers the nearest command or option, and
 * answers `--json` runs with a JSON error object.
 */
async function run(root: CommandDef, argv: string[]): Promise<void> {
  const json = argv.includes("--json");
  const fail = (message: string): never => exitWith(new CliError(message), { json });
  const { command, parent, path, unknownCommand } = await resolveCommand(root, argv);
  if (unknownCommand) {
    const { word, suggestion, known } = unknownCommand;
    fail(`unknown command \`${path} ${word}\`. ${suggestion ? `Did you mean \`${path} ${suggestion}\`?` : `Commands: ${known.join(", ")}.`} See: ${path} --help`);
  }
  if (argv.includes("--help") || argv.includes("-h")) {
    await showUsage(command, parent);
    return;
  }
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-v")) {
    process.stdout.write(`${version}\n`);
    return;
  }
  if (command.subCommands && !command.run) {
    await showUsage(command, parent);
    if (argv.some((a) => !a.startsWith("-")) || command !== root) process.exitCode = 1;
    return;
  }
  const unknown = await unknownFlag(command, argv);
  if (unknown) {
    fail(`unknown option ${unknown.flag} for \`${path}\`.${unknown.suggestion ? ` Did you mean ${unknown.suggestion}?` : ""} See: ${path} --help`);
  }
  try {
    await runCommand(root, { rawArgs: argv });
  } catch (e) {
    exitWith(citty(e, path), { json });
  }
}

/** citty's own argument errors, in the words the rest of the CLI uses. */
function citty(e: unknown, path: string): unknown {
  if (!(e instanceof Error) || !("code" in e) || typeof e.code !== "string" || !e.code.startsWith("E")) return e;
  const missing = /^Missing required argument: (--\S+)/.exec(e.message);
  if (missing) return new CliError(`${missing[1]} is required. See: ${path} --help`);
  const positional = /^Missing required positional argument: (\S+)/.exec(e.message);
  if (positional) return new CliError(`${positional[1]} is required: \`${path} <${positional[1]!.toLowerCase()}>\`. See: ${path} --help`);
  return new CliError(`${e.message.replace(/\u001b\[\d+m/g, "")}. See: ${path} --help`);
}

await run(main, process.argv.slice(2));
