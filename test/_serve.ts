import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach } from "vitest";
import { cleanEnv } from "./_helpers.ts";

export const BIN = fileURLToPath(new URL("../bin/tenantd", import.meta.url));

/** Cheap argon2 for servers started as child processes. */
export const TEST_ARGON2_ENV = { TENANTD_ARGON2_MEMORY_COST: "1024", TENANTD_ARGON2_TIME_COST: "1" };

export interface Served {
  child: ChildProcess;
  url: string;
  /** everything printed so far */
  stdout(): string;
  stderr(): string;
  /** resolves once stdout (or stderr) matches */
  waitFor(pattern: RegExp, stream?: "stdout" | "stderr"): Promise<string>;
  /** resolves with the exit code (or the signal name) */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running: ChildProcess[] = [];
afterEach(async () => {
  for (const child of running.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((r) => child.once("close", r));
    }
  }
});

/** Runs the built CLI (`bin/tenantd`) as a child process with a clean environment plus `env`. */
export function spawnCli(args: string[], env: Record<string, string> = {}, cwd?: string): Served {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...cleanEnv(), ...env }, stdio: ["ignore", "pipe", "pipe"], cwd });
  running.push(child);
  let out = "";
  let err = "";
  const waiters: { pattern: RegExp; stream: "stdout" | "stderr"; resolve: (s: string) => void }[] = [];
  const check = () => {
    for (const w of [...waiters]) {
      const text = w.stream === "stdout" ? out : err;
      const m = w.pattern.exec(text);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m[0]);
      }
    }
  };
  child.stdout!.on("data", (d) => ((out += d), check()));
  child.stderr!.on("data", (d) => ((err += d), check()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on("close", (code, signal) => resolve({ code, signal })));
  const served: Served = {
    child,
    url: "",
    stdout: () => out,
    stderr: () => err,
    waitFor(pattern, stream = "stdout") {
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, stream, resolve });
        check();
        void exited.then(({ code }) => reject(new Error(`tenantd exited (${code}) before printing ${pattern}\nstdout: ${out}\nstderr: ${err}`)));
      });
    },
    exited,
  };
  return served;
}

/** `tenantd serve --port 0` on `dataDir`, resolved once it listens and has printed its banner. */
export async function serve(dataDir: string, args: string[] = [], env: Record<string, string> = {}, cwd?: string): Promise<Served> {
  const s = spawnCli(["serve", "--port", "0", "--data-dir", dataDir, ...args], { ...TEST_ARGON2_ENV, ...env }, cwd);
  await s.waitFor(/developer create --email|^apps: .*$/m);
  const url = /listening on (\S+)/.exec(s.stdout())![1]!;
  return Object.assign(s, { url });
}
