import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cleanEnv, cliStoreEnv } from "./_helpers.ts";

const BIN = fileURLToPath(new URL("../bin/tenantd", import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the built CLI as a child process with stdout piped (not a terminal), as a script would,
 * on the store of its `--data-dir` (on PostgreSQL, that directory's test database).
 */
export async function runCli(args: string[], opts: { input?: string; env?: Record<string, string> } = {}): Promise<CliRun> {
  const store = await cliStoreEnv(args);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...cleanEnv(), ...store, ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? "");
  });
}
