import * as v from "valibot";
import { TrustProxySchema } from "./http/trust-proxy.ts";

/** How a value is written and checked. A list of strings is a choice among them. */
export type OptionKind = "string" | "url" | "count" | "seconds" | "port" | "boolean" | "switch" | "list" | "proxy" | "postgres-url" | readonly string[];

/** One row of the options table in config.ts. */
export interface OptionRow {
  /** Dotted key in the config object and config file, e.g. `rateLimit.perIp`. */
  path: string;
  kind: OptionKind;
  /** Environment variable. */
  env: string;
  /** `tenantd serve` flag, without the dashes; only the common options have one. */
  flag?: string;
  /** Default, in words (shown by `config print` and the docs). */
  default: string;
  doc: string;
  /** Redacted by `tenantd config print`; never given a flag (argv is visible to every user). */
  secret?: boolean;
  /** Extra rule beyond the kind, with the words that say what it expects. */
  check?: { test: (value: unknown) => boolean; expects: string };
}

export type Layer =
  | { kind: "option" | "file"; label: string; values: Record<string, unknown> }
  | { kind: "env"; env: NodeJS.ProcessEnv }
  | { kind: "flag"; flags: Record<string, unknown> };

export interface Source {
  kind: "option" | "file" | "env" | "flag" | "default";
  /** The file, the variable, the flag (with dashes), or the caller. */
  name: string;
}

export function describeSource(s: Source | undefined): string {
  if (!s) return "default";
  switch (s.kind) {
    case "flag":
      return `flag ${s.name}`;
    case "env":
      return `environment variable ${s.name}`;
    case "file":
      return `config file ${s.name}`;
    case "option":
      return s.name;
    default:
      return "default";
  }
}

/** The option as the person wrote it: the flag, the variable, or the key in the file or object. */
function nameIn(row: OptionRow, source: Source): string {
  switch (source.kind) {
    case "flag":
      return source.name;
    case "env":
      return `environment variable ${source.name} (option ${row.path})`;
    case "file":
      return `option ${row.path} in config file ${source.name}`;
    default:
      return `option ${row.path}`;
  }
}

const httpUrl = (s: string) => /^https?:\/\/[^\s]+$/i.test(s) && URL.canParse(s);
const postgresUrl = (s: string) => /^postgres(ql)?:\/\/[^\s]+$/i.test(s) && URL.canParse(s);

function schemaOf(kind: OptionKind): v.GenericSchema {
  if (Array.isArray(kind)) return v.picklist(kind as string[]);
  switch (kind) {
    case "string":
      return v.pipe(v.string(), v.minLength(1));
    case "url":
      return v.pipe(v.string(), v.check(httpUrl));
    case "postgres-url":
      return v.pipe(v.string(), v.check(postgresUrl));
    case "count":
      return v.pipe(v.number(), v.integer(), v.minValue(1));
    case "seconds":
      return v.pipe(v.number(), v.minValue(0));
    case "proxy":
      return TrustProxySchema;
    case "port":
      return v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(65535));
    case "boolean":
    case "switch":
      return v.boolean();
    case "list":
      return v.array(v.pipe(v.string(), v.minLength(1)));
  }
  throw new Error(`unknown option kind ${String(kind)}`);
}

function expects(row: OptionRow, raw: boolean): string {
  if (row.check) return row.check.expects;
  const kind = row.kind;
  if (Array.isArray(kind)) return `one of ${kind.join(", ")}`;
  switch (kind) {
    case "string":
      return "a non-empty text";
    case "url":
      return "an http(s) URL such as https://api.example.com";
    case "postgres-url":
      return "a PostgreSQL URL such as postgres://user:password@db.example.com:5432/tenantd";
    case "count":
      return "a whole number of at least 1";
    case "seconds":
      return "a number of seconds, such as 30 or 0.5";
    case "proxy":
      return raw
        ? "true or false, a number of proxy hops (0-10), or a comma-separated list of proxy addresses/CIDRs such as 10.0.0.0/8,loopback"
        : "true or false, a number of proxy hops (0-10), or a list of proxy addresses/CIDRs";
    case "port":
      return "a number from 0 to 65535";
    case "boolean":
      return raw ? "true or false (also 1/0, yes/no, on/off)" : "true or false";
    case "list":
      return raw ? "a comma-separated list, such as 10.0.0.0/8,192.168.1.1" : "a list of non-empty texts";
    default:
      return raw ? "false (also 0, no, off) to turn it off, or true" : "false to turn it off, or an object of its settings";
  }
}

const TRUE = /^(1|true|yes|on)$/i;
const FALSE = /^(0|false|no|off)$/i;

/** Text from the environment or a flag, as the value the row's kind takes (or left as text to fail). */
function coerce(kind: OptionKind, raw: unknown): unknown {
  if (typeof raw !== "string") return raw;
  if (kind === "count" || kind === "port") return /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (kind === "seconds") return /^\d+(\.\d+)?$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (kind === "list") return raw.split(",").map((x) => x.trim()).filter(Boolean);
  if (kind === "proxy") {
    const t = raw.trim();
    if (TRUE.test(t) && !/^1$/.test(t)) return true;
    if (FALSE.test(t) && !/^0$/.test(t)) return false;
    return /^\d+$/.test(t) ? Number(t) : t.split(",").map((x) => x.trim()).filter(Boolean);
  }
  if (kind === "boolean" || kind === "switch") return TRUE.test(raw.trim()) ? true : FALSE.test(raw.trim()) ? false : raw;
  return raw;
}

function editDistance(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
  return d[a.length]![b.length]!;
}

const isPlainObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x) && Object.getPrototypeOf(x) === Object.prototype;

export interface Collected {
  /** The winning value of a table option, validated; undefined when nothing set it. */
  get(path: string): unknown;
  sourceOf(path: string): Source | undefined;
  /** Options only code gives (driver, clock, logger object, …), validated. */
  code: Record<string, unknown>;
}

/**
 * Merges option layers, highest first, and checks every value once. A bad value is reported
 * with the option's name, where it came from and what it should be, in plain words.
 */
export function collectOptions(
  rows: OptionRow[],
  codeOnly: Record<string, { schema: v.GenericSchema; expects: string }>,
  layers: Layer[],
  fail: (message: string) => Error,
): Collected {
  const byPath = new Map(rows.map((r) => [r.path, r]));
  const parents = new Set(rows.flatMap((r) => r.path.split(".").slice(0, -1).map((_, i, a) => a.slice(0, i + 1).join("."))));
  const values = new Map<string, { value: unknown; source: Source }>();
  const code: Record<string, unknown> = {};

  const accept = (row: OptionRow, raw: unknown, source: Source) => {
    if (values.has(row.path)) return;
    const fromText = source.kind === "env" || source.kind === "flag";
    const value = fromText ? coerce(row.kind, raw) : raw;
    const ok = v.safeParse(schemaOf(row.kind), value).success && (!row.check || row.check.test(value));
    if (!ok) {
      const shown = row.secret ? "(hidden)" : JSON.stringify(raw);
      throw fail(`${nameIn(row, source)} must be ${expects(row, fromText)}; got ${shown}.`);
    }
    values.set(row.path, { value, source });
  };

  const walk = (obj: Record<string, unknown>, prefix: string, source: Source) => {
    for (const [key, val] of Object.entries(obj)) {
      if (val === undefined) continue;
      const path = prefix ? `${prefix}.${key}` : key;
      // `storage` is a driver object (code only) or the table's `{ driver: "s3", bucket, … }`.
      const tableObject = parents.has(path) && isPlainObject(val) && !(codeOnly[key] && v.safeParse(codeOnly[key].schema, val).success);
      if (!prefix && codeOnly[key] && !tableObject && (typeof val !== "string" || !byPath.has(key))) {
        if (source.kind === "env") continue;
        if (!(key in code)) {
          if (!v.safeParse(codeOnly[key]!.schema, val).success) throw fail(`${path} (${describeSource(source)}) ${codeOnly[key]!.expects}.`);
          code[key] = val;
        }
        continue;
      }
      if (parents.has(path) && isPlainObject(val)) {
        walk(val, path, source);
        continue;
      }
      const row = byPath.get(path);
      if (row) {
        accept(row, val, source);
        continue;
      }
      const near = [...byPath.keys(), ...Object.keys(codeOnly)].filter((p) => editDistance(p.toLowerCase(), path.toLowerCase()) <= 2);
      const hint = near.length ? ` Did you mean ${near.join(" or ")}?` : " The options are listed in docs/configuration.md and by `tenantd config print`.";
      throw fail(`unknown option ${path} in ${describeSource(source)}.${hint}`);
    }
  };

  for (const layer of layers) {
    if (layer.kind === "env") {
      for (const row of rows) {
        const raw = layer.env[row.env];
        if (raw !== undefined && raw !== "") accept(row, raw, { kind: "env", name: row.env });
      }
    } else if (layer.kind === "flag") {
      for (const row of rows) {
        const raw = row.flag ? layer.flags[row.flag] : undefined;
        if (raw !== undefined && raw !== "") accept(row, raw, { kind: "flag", name: `--${row.flag}` });
      }
    } else {
      walk(layer.values, "", { kind: layer.kind, name: layer.label });
    }
  }
  return { get: (p) => values.get(p)?.value, sourceOf: (p) => values.get(p)?.source, code };
}
