import { describe, expect, it } from "vitest";
import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cleanEnv, tempDir } from "./_helpers.ts";
import { BIN, spawnCli } from "./_serve.ts";

/** A module hook that reports every package loaded from node_modules, for the startup-cost check. */
const HOOK = `
import { register } from "node:module";
register("data:text/javascript," + encodeURIComponent(\`
export async function resolve(spec, ctx, next) {
  const r = await next(spec, ctx);
  const m = /node_modules\\\\/((?:@[^/]+\\\\/)?[^/]+)\\\\//.exec(r.url);
  if (m) process.stderr.write("loaded-package " + m[1] + "\\\\n");
  return r;
}\`));
`;

function withHook(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const hook = join(tempDir(), "hook.mjs");
  writeFileSync(hook, HOOK);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", hook, BIN, ...args], { env: cleanEnv(), stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

describe("tenantd CLI shape", () => {
  it("--help lists every command", async () => {
    const source = readFileSync(new URL("../src/cli/index.ts", import.meta.url), "utf8");
    const commands = [...source.matchAll(/^\s+["']?([\w-]+)["']?: \(\) => import\(/gm)].map((m) => m[1]!);
    expect(commands).toEqual(expect.arrayContaining(["serve", "config", "backup", "restore"]));
    const help = spawnCli(["--help"]);
    expect((await help.exited).code).toBe(0);
    for (const c of commands) expect(help.stdout()).toMatch(new RegExp(`^\\s*(\\x1b\\[\\d+m)?${c}\\b`, "m"));
  });

  it("app list loads neither stripe, arctic nor nodemailer", async () => {
    const dir = tempDir();
    expect((await spawnCli(["app", "create", "--name", "shop", "--data-dir", dir]).exited).code).toBe(0);
    const run = await withHook(["app", "list", "--data-dir", dir]);
    expect(run.code).toBe(0);
    // The hook itself works: packages every command needs show up.
    expect(run.stderr).toContain("loaded-package better-sqlite3");
    for (const heavy of ["stripe", "arctic", "nodemailer"]) expect(run.stderr).not.toContain(`loaded-package ${heavy}\n`);
  });
});
