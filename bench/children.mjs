// Starts a server child and talks to it over IPC: requests carry an id, replies match it.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

export async function startChild(file, { execArgv = [], env } = {}) {
  const child = fork(fileURLToPath(new URL(file, import.meta.url)), [], {
    execArgv,
    ...(env ? { env: { ...process.env, ...env } } : {}),
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const pending = new Map();
  let next = 1;
  const ready = new Promise((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`${file} exited with ${code} before it was ready`)));
    child.on("message", (msg) => {
      if (msg?.type === "ready") return resolve(msg);
      const p = pending.get(msg?.id);
      if (!p) return;
      pending.delete(msg.id);
      msg.ok ? p.resolve(msg.result) : p.reject(new Error(`${file}: ${msg.error}`));
    });
  });
  child.on("exit", () => {
    for (const p of pending.values()) p.reject(new Error(`${file} exited`));
    pending.clear();
  });
  const info = await ready;
  return {
    ...info,
    pid: child.pid,
    /** the server file's name without extension (tenantd-server, raw-server, …) */
    label: file.replace(/^.*\//, "").replace(/\.mjs$/, ""),
    /** Sends a command and waits for its answer. */
    call(cmd, args) {
      return new Promise((resolve, reject) => {
        const id = next++;
        pending.set(id, { resolve, reject });
        child.send({ id, cmd, args });
      });
    },
    /** Asks the child to close its server and remove its data, then waits for it to exit. */
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      await this.call("shutdown").catch(() => {});
      child.disconnect();
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
