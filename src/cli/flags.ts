import type { ArgsDef, CommandDef } from "citty";
import { closest } from "./suggest.ts";

type Resolvable<T> = T | Promise<T> | (() => T) | (() => Promise<T>);
const resolveValue = async <T>(value: Resolvable<T> | undefined): Promise<T | undefined> =>
  typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export interface ResolvedCommand {
  command: CommandDef;
  /** The command above it (for usage lines), if any. */
  parent?: CommandDef;
  /** "tenantd tenant list" */
  path: string;
  /** A word where a subcommand was expected that names none, with the nearest one. */
  unknownCommand?: { word: string; suggestion: string | undefined; known: string[] };
}

/** Walks the command line down the subcommands, as far as its words name them. */
export async function resolveCommand(root: CommandDef, argv: string[]): Promise<ResolvedCommand> {
  let command: CommandDef = root;
  let parent: CommandDef | undefined;
  const path = [String((await resolveValue(root.meta))?.name ?? "tenantd")];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token.startsWith("-")) continue;
    const subs = await resolveValue(command.subCommands);
    if (!subs) break;
    const next = subs[token];
    if (!next) {
      // The value of a flag written `--flag value` is not a command word.
      const previous = argv[i - 1];
      if (previous?.startsWith("--") && !previous.includes("=")) continue;
      const known = Object.keys(subs);
      return { command, parent, path: path.join(" "), unknownCommand: { word: token, suggestion: closest(token, known), known } };
    }
    parent = command;
    command = (await resolveValue(next)) as CommandDef;
    path.push(token);
  }
  return { command, parent, path: path.join(" ") };
}

/**
 * The option the command line names that its command does not take, if any, with the
 * nearest one it does take. citty accepts unknown flags in silence, so `serve --prot 3108`
 * would start on the default port.
 */
export async function unknownFlag(command: CommandDef, argv: string[]): Promise<{ flag: string; suggestion: string | undefined } | undefined> {
  const args = ((await resolveValue(command.args)) ?? {}) as ArgsDef;
  const known = new Set(["help", "h", "version", "v"]);
  const names: string[] = ["help"];
  for (const [name, def] of Object.entries(args)) {
    if ((def as { type?: string }).type === "positional") continue;
    known.add(name).add(camel(name));
    names.push(name);
    const alias = (def as { alias?: string | string[] }).alias;
    for (const a of Array.isArray(alias) ? alias : alias ? [alias] : []) known.add(a);
  }
  for (const token of argv) {
    if (!token.startsWith("--") || token === "--") continue;
    const name = token.slice(2).split("=")[0]!;
    if (!known.has(name) && !(name.startsWith("no-") && known.has(name.slice(3)))) {
      const suggestion = closest(name, names);
      return { flag: `--${name}`, suggestion: suggestion && `--${suggestion}` };
    }
  }
  return undefined;
}
