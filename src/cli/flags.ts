import type { ArgsDef, CommandDef } from "citty";

type Resolvable<T> = T | Promise<T> | (() => T) | (() => Promise<T>);
const resolveValue = async <T>(value: Resolvable<T> | undefined): Promise<T | undefined> =>
  typeof value === "function" ? await (value as () => T | Promise<T>)() : await value;

const camel = (s: string) => s.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The option the command line names that its command does not take, if any. citty accepts
 * unknown flags in silence, so `serve --prot 3108` would start on the default port.
 */
export async function unknownFlag(root: CommandDef, argv: string[]): Promise<{ flag: string; command: string } | undefined> {
  let command: CommandDef = root;
  const path = [String((await resolveValue(root.meta))?.name ?? "tenantd")];
  for (const token of argv) {
    if (token.startsWith("-")) continue;
    const subs = await resolveValue(command.subCommands);
    const next = subs?.[token];
    if (!next) break;
    command = (await resolveValue(next)) as CommandDef;
    path.push(token);
  }
  const args = ((await resolveValue(command.args)) ?? {}) as ArgsDef;
  const known = new Set(["help", "h", "version", "v"]);
  for (const [name, def] of Object.entries(args)) {
    known.add(name).add(camel(name));
    const alias = (def as { alias?: string | string[] }).alias;
    for (const a of Array.isArray(alias) ? alias : alias ? [alias] : []) known.add(a);
  }
  for (const token of argv) {
    if (!token.startsWith("--") || token === "--") continue;
    const name = token.slice(2).split("=")[0]!;
    if (!known.has(name) && !(name.startsWith("no-") && known.has(name.slice(3)))) return { flag: `--${name}`, command: path.join(" ") };
  }
  return undefined;
}
