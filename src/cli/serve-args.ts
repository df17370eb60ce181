import type { ArgsDef } from "citty";
import { OPTIONS } from "../config.ts";

/** `serve` and `config print` take the same flags: one per table option that has one, plus these. */
export function serveArgs(): ArgsDef {
  const args: ArgsDef = {
    config: { type: "string", description: "Config file (JSON, .ts or .mjs). Env TENANTD_CONFIG; default ./tenantd.config.{json,ts,mjs,js} if present", valueHint: "path" },
    production: { type: "boolean", description: "Production mode (same as --mode production)" },
  };
  for (const row of OPTIONS) {
    if (!row.flag) continue;
    const text = `${row.doc.split(/(?<=\.)\s/)[0]} Env ${row.env}; default ${row.default}`;
    args[row.flag] = row.kind === "boolean" ? { type: "boolean", description: text } : { type: "string", description: text, valueHint: typeof row.kind === "string" ? row.kind : row.kind.join("|") };
  }
  return args;
}

/** citty's parsed args as the flag layer: `--production` is `--mode production`. */
export function flagLayer(args: Record<string, unknown>): Record<string, unknown> {
  const flags = { ...args };
  if (flags.production === true && flags.mode === undefined) flags.mode = "production";
  return flags;
}
