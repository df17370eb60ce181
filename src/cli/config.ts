import { defineCommand } from "citty";
import { describeSource, isCodeConfigFile, loadConfig, showValue } from "../config-file.ts";
import { exitWith } from "./shared.ts";
import { flagLayer, serveArgs } from "./serve-args.ts";

const print = defineCommand({
  meta: { name: "print", description: "Show the configuration `tenantd serve` would run with (same flags), where each value comes from; secrets redacted" },
  args: { ...serveArgs(), json: { type: "boolean", description: "Print JSON (for scripts)", default: false } },
  async run({ args }) {
    const { json, ...flags } = args;
    try {
      const { entries, file } = await loadConfig(flagLayer(flags), process.env);
      if (json) {
        const rows = entries.map((e) => ({ option: e.path, value: e.value === undefined ? null : e.secret ? "[redacted]" : e.value, source: e.source ? describeSource(e.source) : "default", default: e.default }));
        process.stdout.write(JSON.stringify({ file: file ?? null, fileIsCode: file !== undefined && isCodeConfigFile(file), options: rows }, null, 2) + "\n");
        return;
      }
      // A module config file was executed to read it: whoever can write it runs code as this user.
      const code = file !== undefined && isCodeConfigFile(file) ? " (code: it was run to read it; trust its directory, or name a file with --config)" : "";
      process.stdout.write(`config file: ${file ?? "(none)"}${code}\n`);
      const width = Math.max(...entries.map((e) => e.path.length));
      for (const e of entries) {
        process.stdout.write(`${e.path.padEnd(width)}  ${showValue(e)}${e.source ? `  [${describeSource(e.source)}]` : ""}\n`);
      }
    } catch (e) {
      exitWith(e);
    }
  },
});

export default defineCommand({
  meta: { name: "config", description: "Inspect the server configuration (config print)" },
  subCommands: { print },
});
