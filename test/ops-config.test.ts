import { describe, expect, it } from "vitest";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPTIONS } from "../src/config.ts";
import { collectOptions, type OptionRow } from "../src/config-options.ts";
import { tempDir } from "./_helpers.ts";
import { serve, spawnCli } from "./_serve.ts";

type Layer = "file" | "env" | "flag";

/** A valid value of the option's kind, different per layer, so the winner is visible. */
function sample(row: OptionRow, layer: Layer): string | number | boolean | string[] {
  const i = { file: 0, env: 1, flag: 2 }[layer];
  if (typeof row.kind !== "string") return row.kind[i % row.kind.length]!;
  switch (row.kind) {
    case "string":
      // A row with its own check (a path) gets a value of that shape.
      return row.check && !row.check.test(`${layer}-value`) ? `/${layer}-value` : `${layer}-value`;
    case "url":
      return `https://${layer}.example.com`;
    case "postgres-url":
      return `postgres://tenantd:pw@${layer}.example.com:5432/tenantd`;
    case "count":
    case "port":
      return 11 * (i + 1);
    case "boolean":
      return i % 2 === 0;
    case "switch":
      return false;
    case "seconds":
      return 11 * (i + 1);
    case "proxy":
      return [["10.0.0.0/8", "loopback"], 2, true][i]!;
    case "list":
      return [`${layer}-a`]; // one entry: the same as text in env and flags
  }
  throw new Error(String(row.kind));
}

function setPath(obj: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split(".");
  let at = obj;
  for (const k of keys.slice(0, -1)) at = (at[k] ??= {}) as Record<string, unknown>;
  at[keys.at(-1)!] = value;
}

interface Printed {
  file: string | null;
  options: { option: string; value: unknown; source: string }[];
}

async function configPrint(cwd: string, env: Record<string, string>, flags: string[] = []): Promise<Printed> {
  const run = spawnCli(["config", "print", "--json", ...flags], env, cwd);
  const { code } = await run.exited;
  expect(code, run.stderr()).toBe(0);
  return JSON.parse(run.stdout()) as Printed;
}

// rateLimit (the on/off switch) and its settings cannot both come from one file object.
const inFile = OPTIONS.filter((r) => r.kind !== "switch");

describe("one configuration surface: file, TENANTD_* env, flags", () => {
  it("sets every option from a config file, from the environment and from a flag, flags > env > file", async () => {
    const cwd = tempDir();
    const file: Record<string, unknown> = {};
    for (const row of inFile) setPath(file, row.path, sample(row, "file"));
    writeFileSync(join(cwd, "tenantd.config.json"), JSON.stringify(file));
    const env = Object.fromEntries(OPTIONS.map((r) => [r.env, String(sample(r, "env"))]));
    const flags = OPTIONS.filter((r) => r.flag).map((r) => (r.kind === "boolean" ? (sample(r, "flag") ? `--${r.flag}` : `--no-${r.flag}`) : `--${r.flag}=${sample(r, "flag")}`));

    const shown = (p: Printed, path: string) => p.options.find((o) => o.option === path)!;
    const expectFrom = (p: Printed, row: OptionRow, layer: Layer) => {
      const o = shown(p, row.path);
      const source = layer === "file" ? `config file ${join(cwd, "tenantd.config.json")}` : layer === "env" ? `environment variable ${row.env}` : `flag --${row.flag}`;
      expect(o.source, row.path).toBe(source);
      expect(o.value, row.path).toEqual(row.secret ? "[redacted]" : sample(row, layer));
    };

    const fileOnly = await configPrint(cwd, {});
    expect(fileOnly.file).toBe(join(cwd, "tenantd.config.json"));
    for (const row of inFile) expectFrom(fileOnly, row, "file");

    const envOverFile = await configPrint(cwd, env);
    for (const row of OPTIONS) expectFrom(envOverFile, row, "env");

    const flagsOverAll = await configPrint(cwd, env, flags);
    for (const row of OPTIONS) expectFrom(flagsOverAll, row, row.flag ? "flag" : "env");
    expect(OPTIONS.filter((r) => r.flag).length).toBeGreaterThan(5);
  });

  it("secrets never show, and never have a flag (argv is visible to every user)", async () => {
    const cwd = tempDir();
    const printed = await configPrint(cwd, { TENANTD_SECRET_KEY: "a".repeat(64), TENANTD_SMTP_PASS: "hunter2-smtp" });
    const text = JSON.stringify(printed);
    expect(text).not.toContain("hunter2-smtp");
    expect(text).not.toContain("a".repeat(64));
    expect(printed.options.find((o) => o.option === "email.smtp.pass")).toMatchObject({ value: "[redacted]", source: "environment variable TENANTD_SMTP_PASS" });
    for (const row of OPTIONS.filter((r) => r.secret)) expect(row.flag).toBeUndefined();
  });

  it("a running server takes each layer with the same precedence", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "tenantd.config.json"), JSON.stringify({ publicUrl: "https://from-file.example", maxJsonBytes: 64 }));
    const dataDir = tempDir();
    const fromFile = await serve(dataDir, [], {}, cwd);
    expect(fromFile.stdout()).toContain("public URL (used in links): https://from-file.example");
    expect(fromFile.stdout()).toContain(`config file: ${join(cwd, "tenantd.config.json")}`);
    // maxJsonBytes from the file is in force: a 100-byte body is refused.
    const key = /publishable key:\s+(\S+)/.exec(fromFile.stdout())![1]!;
    const big = await fetch(`${fromFile.url}/api/v1/auth/login`, { method: "POST", headers: { "content-type": "application/json", "x-service-key": key }, body: JSON.stringify({ email: "x".repeat(80), password: "p" }) });
    expect(big.status).toBe(413);
    fromFile.child.kill("SIGTERM");
    await fromFile.exited;

    const fromEnv = await serve(dataDir, [], { TENANTD_PUBLIC_URL: "https://from-env.example" }, cwd);
    expect(fromEnv.stdout()).toContain("public URL (used in links): https://from-env.example");
    fromEnv.child.kill("SIGTERM");
    await fromEnv.exited;

    const fromFlag = await serve(dataDir, ["--public-url", "https://from-flag.example"], { TENANTD_PUBLIC_URL: "https://from-env.example" }, cwd);
    expect(fromFlag.stdout()).toContain("public URL (used in links): https://from-flag.example");
  });

  it("docs/configuration.md has one table row per option, with its env var, flag and default", () => {
    const page = readFileSync(new URL("../docs/configuration.md", import.meta.url), "utf8");
    const doc = page.slice(page.indexOf("## Options"), page.indexOf("\n## ", page.indexOf("## Options") + 1));
    const rows = new Map([...doc.matchAll(/^\| `([\w.]+)` \|(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
    for (const row of OPTIONS) {
      expect(rows.has(row.path), row.path).toBe(true);
      const line = rows.get(row.path)!;
      expect(line).toContain(`\`${row.env}\``);
      if (row.flag) expect(line).toContain(`\`--${row.flag}\``);
      expect(line).toContain(row.default.replace(/\|/g, "\\|"));
    }
    expect([...rows.keys()].filter((p) => !OPTIONS.some((r) => r.path === p))).toEqual([]);
  });

  it("a list option takes a comma-separated value from env or flag and an array from a file", () => {
    const row: OptionRow = { path: "proxies", kind: "list", env: "X_PROXIES", flag: "proxies", default: "none", doc: "" };
    const fail = (m: string) => new Error(m);
    const fromEnv = collectOptions([row], {}, [{ kind: "env", env: { X_PROXIES: "10.0.0.0/8, 192.168.1.1,," } }], fail);
    expect(fromEnv.get("proxies")).toEqual(["10.0.0.0/8", "192.168.1.1"]);
    const fromFile = collectOptions([row], {}, [{ kind: "file", label: "f.json", values: { proxies: ["::1"] } }], fail);
    expect(fromFile.get("proxies")).toEqual(["::1"]);
    expect(() => collectOptions([row], {}, [{ kind: "file", label: "f.json", values: { proxies: "10.0.0.1" } }], fail)).toThrow("option proxies in config file f.json must be a list of non-empty texts");
  });

  it("NODE_ENV=production chooses production mode when nothing else does, and config print says so", async () => {
    const printed = await configPrint(tempDir(), { NODE_ENV: "production" });
    expect(printed.options.find((o) => o.option === "mode")).toMatchObject({ value: "production", source: "environment variable NODE_ENV" });
    const flagWins = await configPrint(tempDir(), { NODE_ENV: "production" }, ["--mode", "development"]);
    expect(flagWins.options.find((o) => o.option === "mode")).toMatchObject({ value: "development", source: "flag --mode" });
  });

  it("reads a TypeScript config file", async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, "tenantd.config.ts"), 'const port: number = 4321;\nexport default { port, logFormat: "json" as const };\n');
    const printed = await configPrint(cwd, {});
    expect(printed.options.find((o) => o.option === "port")).toMatchObject({ value: 4321, source: `config file ${join(cwd, "tenantd.config.ts")}` });
    expect(printed.options.find((o) => o.option === "logFormat")).toMatchObject({ value: "json" });
  });

  it.each([
    ["environment", [], { TENANTD_RATE_LIMIT_PER_IP: "lots" }, null, 'environment variable TENANTD_RATE_LIMIT_PER_IP (option rateLimit.perIp) must be a whole number of at least 1; got "lots"'],
    ["flag", ["--log-format", "xml"], {}, null, '--log-format must be one of pretty, json; got "xml"'],
    ["config file", [], {}, { files: { maxBytes: "10MB" } }, 'option files.maxBytes in config file'],
    ["config file, unknown key", [], {}, { rateLimt: { perIp: 3 } }, "unknown option rateLimt in config file"],
    ["flag, bad URL", ["--public-url", "localhost:3000"], {}, null, '--public-url must be an http(s) URL such as https://api.example.com; got "localhost:3000"'],
  ])("a bad value from the %s stops serve with a message naming the option and its source", async (_name, flags, env, file, message) => {
    const cwd = tempDir();
    if (file) writeFileSync(join(cwd, "tenantd.config.json"), JSON.stringify(file));
    const run = spawnCli(["serve", "--port", "0", "--data-dir", tempDir(), ...flags], env as Record<string, string>, cwd);
    const { code } = await run.exited;
    expect(code).toBe(1);
    expect(run.stderr()).toContain(message);
    if (file && "files" in file) expect(run.stderr()).toContain('must be a whole number of at least 1; got "10MB"');
    if (file && "rateLimt" in file) expect(run.stderr()).toContain("Did you mean rateLimit?");
    // Plain words, not the validator's.
    expect(run.stderr()).not.toMatch(/Expected|never|Invalid (type|key)/);
    expect(run.stdout()).not.toContain("listening");
  });

  it("config print says when the config file it used is code that was run, not when it is JSON (issue 39)", async () => {
    const cwd = tempDir();
    const marker = join(cwd, "ran.txt");
    writeFileSync(join(cwd, "tenantd.config.mjs"), `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "yes");\nexport default { port: 4321 };\n`);
    const text = spawnCli(["config", "print"], {}, cwd);
    expect((await text.exited).code, text.stderr()).toBe(0);
    expect(text.stdout()).toContain(`config file: ${join(cwd, "tenantd.config.mjs")} (code: it was run to read it`);
    expect(readFileSync(marker, "utf8")).toBe("yes");
    expect(((await configPrint(cwd, {})) as Printed & { fileIsCode: boolean }).fileIsCode).toBe(true);

    const jsonDir = tempDir();
    writeFileSync(join(jsonDir, "tenantd.config.json"), JSON.stringify({ port: 4321 }));
    const plain = spawnCli(["config", "print"], {}, jsonDir);
    expect((await plain.exited).code).toBe(0);
    expect(plain.stdout()).toMatch(/^config file: \S+tenantd\.config\.json\n/);
    expect(((await configPrint(jsonDir, {})) as Printed & { fileIsCode: boolean }).fileIsCode).toBe(false);
  });
});
