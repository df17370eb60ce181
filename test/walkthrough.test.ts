import { describe, expect, it, onTestFinished } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, readFileSync, realpathSync, symlinkSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";
import { cleanEnv, tempDir } from "./_helpers.ts";

const root = join(import.meta.dirname, "..");

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** Resolves once `read()` matches, checked whenever the child writes. */
function waitFor(child: ChildProcess, read: () => string, pattern: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => pattern.test(read()) && (cleanup(), resolve());
    const onExit = (code: number | null) => code !== 0 && (cleanup(), reject(new Error(`${what} exited with ${code}:\n${read()}`)));
    const cleanup = () => {
      child.stdout!.off("data", check);
      child.stderr!.off("data", check);
      child.off("exit", onExit);
    };
    child.stdout!.on("data", check);
    child.stderr!.on("data", check);
    child.on("exit", onExit);
    check();
  });
}

// docs/walkthrough.md, run as written: the server block in one shell (installing tenantd
// from "the clone", this checkout, beside the new directory), every other block in order in
// a second one. Only the ports change (3000 and 4000 may be taken on the machine), and npm
// answers from its cache where it can and runs no install scripts.
describe("docs/walkthrough.md", () => {
  it("works command by command, from installing from a clone to a verified webhook", { timeout: 180_000 }, async () => {
    const doc = readFileSync(join(root, "docs", "walkthrough.md"), "utf8");
    const blocks = [...doc.matchAll(/(<!-- walkthrough:server -->\n)?```sh\n([\s\S]*?)```/g)].map((m) => ({ server: Boolean(m[1]), text: m[2]! }));
    const [port, receiverPort] = [await freePort(), await freePort()];
    const ports = (s: string) => s.replaceAll("localhost:3000", `localhost:${port}`).replaceAll("4000", String(receiverPort));
    // A new directory next to the clone, as the page says.
    const parent = tempDir();
    symlinkSync(root, join(parent, "tenantd"), "dir");
    const cwd = join(parent, "my-app");
    mkdirSync(cwd);
    const prelude = "set -eo pipefail\n";

    const serverBlock = blocks.find((b) => b.server)!.text;
    expect(serverBlock.split("\n")[0]).toBe("npm install ../tenantd");
    const serverScript = serverBlock.replace("npx tenantd serve", `npx tenantd serve --port ${port}`);
    // ignore-scripts: the clone is this checkout, already built; its prepare script must not
    // rebuild dist/ under the other test files.
    const npmEnv = { npm_config_prefer_offline: "true", npm_config_ignore_scripts: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };
    const spawnShell = (script: string) => spawn("bash", ["-c", prelude + script], { cwd, env: { ...cleanEnv(), ...npmEnv }, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    const children: ChildProcess[] = [];
    // Each shell runs in its own process group: ending the group ends what it started (the
    // server, the background receiver), also when the test fails or times out.
    onTestFinished(() => {
      for (const child of children) {
        try {
          process.kill(-child.pid!, "SIGTERM");
        } catch {}
      }
    });
    {
      const server = spawnShell(serverScript);
      children.push(server);
      let serverOut = "";
      server.stdout!.on("data", (d) => (serverOut += d));
      server.stderr!.on("data", (d) => (serverOut += d));
      await waitFor(server, () => serverOut, /publishable key/, "tenantd serve");
      // npx ran the installed package's CLI: the clone's, through node_modules.
      expect(realpathSync(join(cwd, "node_modules", "tenantd"))).toBe(realpathSync(root));

      const steps = spawnShell(ports(blocks.filter((b) => !b.server).map((b) => b.text).join("\n")));
      children.push(steps);
      let out = "";
      steps.stdout!.on("data", (d) => (out += d));
      steps.stderr!.on("data", (d) => (out += d));
      const code = await new Promise<number | null>((resolve) => steps.once("exit", resolve));
      expect(code, out).toBe(0);
      // The receiver (started in the background by the last block) prints the verified event.
      await waitFor(steps, () => out, /deleted: self_delete/, "the webhook receiver");

      expect(out).toContain('"name":"tenantd"');
      expect(out).toContain('"email":"ada@example.com"');
      expect(out).toMatch(/"records":\[\{[^\]]*"title":"Buy milk".*"title":"Ship it".*\],"total":2/);
      expect(out).toContain("hello from the walkthrough");
      expect(out).toMatch(/"record":\{[^}]*"data":\{"title":"Ship it"/);
      expect(out).toContain('"count":1');
      expect(out).toContain('"limit":100');
      expect(out).toContain("(ada@example.com) deleted: self_delete");
    }
  });
});
