import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { CODE_ONLY, ConfigError, OPTIONS, type TenantBackendConfig } from "./config.ts";
import { collectOptions, describeSource, type Layer, type Source } from "./config-options.ts";

/** Names looked for in the working directory when no file is named. */
export const CONFIG_FILES = ["tenantd.config.json", "tenantd.config.ts", "tenantd.config.mjs", "tenantd.config.js"];

/** The config file named by `--config` or `TENANTD_CONFIG`, else the first of CONFIG_FILES in `cwd`. */
export function findConfigFile(named: string | undefined, cwd: string): string | undefined {
  if (named) {
    const path = resolve(cwd, named);
    if (!existsSync(path)) throw new ConfigError(`tenantd config: no config file at ${path} (named by --config or TENANTD_CONFIG).`);
    return path;
  }
  return CONFIG_FILES.map((f) => resolve(cwd, f)).find((p) => existsSync(p));
}

/** A config file that is a module: reading it runs it (docs/configuration.md). */
export const isCodeConfigFile = (path: string): boolean => !path.endsWith(".json");

/** Reads a config file: JSON, or a module whose default export is the config object. */
export async function readConfigFile(path: string): Promise<Record<string, unknown>> {
  let value: unknown;
  try {
    if (path.endsWith(".json")) {
      value = JSON.parse(readFileSync(path, "utf8"));
    } else if (/\.[mc]?ts$/.test(path)) {
      // jiti (loaded only for a .ts file) compiles TypeScript on Node versions that cannot.
      const { createJiti } = await import("jiti");
      value = await createJiti(import.meta.url).import(path, { default: true });
    } else {
      value = ((await import(pathToFileURL(path).href)) as { default?: unknown }).default;
    }
  } catch (e) {
    throw new ConfigError(`tenantd config: cannot read config file ${path}: ${(e as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`tenantd config: config file ${path} must hold an object of options (a module: export default { … }).`);
  }
  return value as Record<string, unknown>;
}

export interface LoadedConfig {
  /** Merged options, ready for createTenantBackend (already validated). */
  config: TenantBackendConfig;
  /** Every table option with its value (secrets included: redact before printing) and source. */
  entries: { path: string; value: unknown; source: Source | undefined; secret: boolean; default: string }[];
  file: string | undefined;
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split(".");
  let at = obj;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  at[keys.at(-1)!] = value;
}

/**
 * The configuration `tenantd serve` runs with: flags over `TENANTD_*` variables over the
 * config file over defaults, checked once, before anything starts.
 */
export async function loadConfig(flags: Record<string, unknown>, env: NodeJS.ProcessEnv, cwd = process.cwd()): Promise<LoadedConfig> {
  const file = findConfigFile((flags.config as string | undefined) || env.TENANTD_CONFIG || undefined, cwd);
  const layers: Layer[] = [{ kind: "flag", flags }, { kind: "env", env }];
  if (file) layers.push({ kind: "file", label: file, values: await readConfigFile(file) });
  const { get, sourceOf, code } = collectOptions(OPTIONS, CODE_ONLY, layers, (m) => new ConfigError(`tenantd config: ${m}`));
  const config: Record<string, unknown> = { ...code };
  const entries: LoadedConfig["entries"] = [];
  for (const row of OPTIONS) {
    const value = get(row.path);
    entries.push({ path: row.path, value, source: sourceOf(row.path), secret: !!row.secret, default: row.default });
    if (value === undefined) continue;
    // An on/off switch (rateLimit, dashboard) and its settings share one config key: off
    // drops the settings, on is the settings (or the defaults).
    const parent = OPTIONS.find((p) => p.kind === "switch" && row.path.startsWith(`${p.path}.`));
    if (parent && get(parent.path) === false) continue;
    if (row.kind === "switch" && value === true) continue;
    setPath(config, row.path, value);
  }
  // A hooks module is named relative to the config file that names it.
  if (typeof config.hooks === "string" && file) config.hooks = resolve(dirname(file), config.hooks);
  // NODE_ENV=production picks production mode when nothing else chose one: say so.
  const mode = entries.find((e) => e.path === "mode")!;
  if (mode.value === undefined && env.NODE_ENV === "production") {
    mode.value = "production";
    mode.source = { kind: "env", name: "NODE_ENV" };
    config.mode = "production";
  }
  return { config: config as TenantBackendConfig, entries, file };
}

/** A value as `config print` shows it. */
export function showValue(e: LoadedConfig["entries"][number]): string {
  if (e.value === undefined) return `(default: ${e.default})`;
  if (e.secret) return "[redacted]";
  return typeof e.value === "string" ? e.value : JSON.stringify(e.value);
}

export { describeSource };
