// Cron jobs on three `tenantd serve` nodes sharing one PostgreSQL database (test/_nodes.ts):
// a job scheduled every second runs exactly once per second across the nodes, and a failing
// job's runs are listed with their error by the admin endpoint.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { call, startNodes, type Cluster } from "./_nodes.ts";

/** Seconds watched; short for CI, long enough for every node to have fired many times. */
const WINDOW = 8;
let cluster: Cluster;
let ranLog: string;
// Not a per-test temp directory: the nodes keep writing to it for the whole file.
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "tenantd-cron-"));
  ranLog = join(dir, "ran.log");
  // Plain JavaScript (no import of tenantd): each run appends the slot it ran for and its node.
  writeFileSync(
    join(dir, "hooks.mjs"),
    `import { appendFileSync } from "node:fs";
export default {
  cron: [
    { name: "tick", schedule: "every 1s", fn: ({ scheduledAt }) => appendFileSync(${JSON.stringify(ranLog)}, scheduledAt.getTime() + " " + process.pid + "\\n") },
    { name: "broken", schedule: "every 2s", fn: () => { throw new Error("the job's own failure"); } },
  ],
};
`,
  );
  writeFileSync(join(dir, "tenantd.config.json"), JSON.stringify({ hooks: "./hooks.mjs" }));
  cluster = await startNodes(3, { TENANTD_CONFIG: join(dir, "tenantd.config.json") });
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("cron across three nodes", () => {
  it("runs a job scheduled every second exactly once per second, on whichever node claims it", async () => {
    const first = (Math.floor(Date.now() / 1000) + 1) * 1000;
    const last = first + (WINDOW - 1) * 1000;
    // Past the last slot, plus time for its run to be written.
    await new Promise((r) => setTimeout(r, last - Date.now() + 1500));
    expect(existsSync(ranLog)).toBe(true);
    const runs = readFileSync(ranLog, "utf8").trim().split("\n").map((l) => l.split(" ").map(Number) as [number, number]);
    const inWindow = runs.filter(([slot]) => slot >= first && slot <= last);
    const slots = inWindow.map(([slot]) => slot).sort((a, b) => a - b);
    expect(slots).toEqual(Array.from({ length: WINDOW }, (_, i) => first + i * 1000));
    // Every node is in the race: more than one of them won slots.
    const pids = new Set(cluster.nodes.map((n) => n.child.pid));
    expect(inWindow.every(([, pid]) => pids.has(pid))).toBe(true);
    expect(new Set(inWindow.map(([, pid]) => pid)).size).toBeGreaterThan(1);
  }, 30_000);

  it("lists each job's last runs with the node that ran them and a failure's error", async () => {
    expect(cluster.cli(["developer", "create", "--email", "cron@example.com", "--password", "developer password"]).status).toBe(0);
    const login = await call(cluster.nodes[1]!, "POST", "/api/v1/developer/login", { body: { email: "cron@example.com", password: "developer password" } });
    const res = await call(cluster.nodes[2]!, "GET", "/api/v1/admin/cron", { developer: login.body.token });
    expect(res.status, res.text).toBe(200);
    const jobs = Object.fromEntries((res.body.jobs as { name: string; schedule: string; runs: { status: string; error: string | null; node: string; scheduledAt: string }[] }[]).map((j) => [j.name, j]));
    expect(jobs.tick!.schedule).toBe("every 1s");
    expect(jobs.tick!.runs.length).toBeGreaterThanOrEqual(WINDOW);
    expect(jobs.tick!.runs.filter((r) => r.status === "ok").length).toBeGreaterThanOrEqual(WINDOW - 1);
    const scheduled = jobs.tick!.runs.map((r) => r.scheduledAt);
    expect(new Set(scheduled).size).toBe(scheduled.length);
    expect(jobs.broken!.runs.length).toBeGreaterThan(0);
    // A run claimed a moment ago may still be running; every finished one failed, saying why.
    const finished = jobs.broken!.runs.filter((r) => r.status !== "running");
    expect(finished.length).toBeGreaterThan(0);
    expect(finished.every((r) => r.status === "failed" && r.error === "the job's own failure")).toBe(true);
    // The nodes log the failure (each node's stderr: whichever ran it).
    expect(cluster.nodes.some((n) => n.stderr().includes("cron job failed") || n.stdout().includes("cron job failed"))).toBe(true);
  });
});
