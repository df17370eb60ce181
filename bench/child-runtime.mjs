// What both server children share: the IPC command loop and the process figures the parent
// reads between scenarios (RSS, peak RSS, event-loop delay). Only the parent measures load.
import { monitorEventLoopDelay, PerformanceObserver, constants } from "node:perf_hooks";
import { getHeapSpaceStatistics } from "node:v8";
import { Session } from "node:inspector/promises";
import { writeFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const MB = 1024 * 1024;

/**
 * Starts answering the parent's IPC requests `{ id, cmd, args }` with `{ id, ok, result | error }`.
 * `commands` adds the server's own commands (seeding, EXPLAIN) to the built-in stats ones.
 */
export function serveIpc(commands) {
  // 5 ms resolution: fine enough for a 20 ms p99 target, cheap enough not to disturb the load.
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let peakRss = process.memoryUsage.rss();
  // CPU time the server spent (all threads: event loop and pool), per scenario.
  let cpuAtReset = process.cpuUsage();
  // Sampled, not only read at the end: a 10 MB upload's buffers may be freed before the scenario ends.
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 25);
  sampler.unref();
  // Garbage collection per scenario: time in young (scavenge) and full collections, and the
  // young generation's size, which V8 grows and shrinks with what the process did before.
  const noGc = () => ({ youngMs: 0, youngCount: 0, fullMs: 0, fullCount: 0 });
  let gc = noGc();
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) {
        gc.youngMs += e.duration;
        gc.youngCount++;
      } else {
        gc.fullMs += e.duration;
        gc.fullCount++;
      }
    }
  }).observe({ entryTypes: ["gc"] });
  const newSpaceMb = () => (getHeapSpaceStatistics().find((s) => s.space_name === "new_space")?.space_size ?? 0) / MB;

  // `--profile`: a CPU profile of each measured load alone (not seeding or warm-up), written
  // by `stats` as <dir>/<name>.cpuprofile.
  const profileDir = process.env.TENANTD_BENCH_PROFILE_DIR;
  let profiler;
  const builtins = {
    /** Only the event-loop histogram: the peak RSS keeps counting across a warm-up. */
    "loop.reset": async () => {
      if (profileDir) {
        if (!profiler) {
          profiler = new Session();
          profiler.connect();
          await profiler.post("Profiler.enable");
        }
        await profiler.post("Profiler.start");
      }
      loop.reset();
      cpuAtReset = process.cpuUsage();
      gc = noGc();
      return true;
    },
    "stats.reset": () => {
      loop.reset();
      cpuAtReset = process.cpuUsage();
      gc = noGc();
      peakRss = process.memoryUsage.rss();
      return { rssMb: peakRss / MB };
    },
    stats: async ({ profileName } = {}) => {
      if (profileDir && profiler && profileName) {
        const { profile } = await profiler.post("Profiler.stop");
        mkdirSync(profileDir, { recursive: true });
        writeFileSync(join(profileDir, `${profileName}.cpuprofile`), JSON.stringify(profile));
      }
      const rss = process.memoryUsage.rss();
      peakRss = Math.max(peakRss, rss);
      const cpu = process.cpuUsage(cpuAtReset);
      return {
        cpuMs: (cpu.user + cpu.system) / 1000,
        cpuSystemMs: cpu.system / 1000,
        rssMb: rss / MB,
        peakRssMb: peakRss / MB,
        loopP50Ms: loop.count ? loop.percentile(50) / 1e6 : 0,
        loopP99Ms: loop.count ? loop.percentile(99) / 1e6 : 0,
        loopMaxMs: loop.count ? loop.max / 1e6 : 0,
        gc: { ...gc, newSpaceMb: newSpaceMb() },
      };
    },
  };
  const all = { ...builtins, ...commands };
  process.on("message", async (msg) => {
    if (!msg || typeof msg.id !== "number") return;
    const fn = all[msg.cmd];
    try {
      if (!fn) throw new Error(`unknown command ${msg.cmd}`);
      process.send({ id: msg.id, ok: true, result: await fn(msg.args ?? {}) });
    } catch (e) {
      process.send({ id: msg.id, ok: false, error: e instanceof Error ? e.stack ?? e.message : String(e) });
    }
  });
  // The parent died or hung up: never leave a server (and its temp data) behind.
  process.on("disconnect", () => commands.shutdown?.().finally(() => process.exit(0)));
}

/** Listens on 127.0.0.1, port 0; resolves to the base URL. */
export function listen(server) {
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${server.address().port}`)));
}

/** Closes the HTTP server, dropping keep-alive connections autocannon may have left. */
export function closeServer(server) {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

/** Requests already accepted (an argon2 hash in the pool) finish after their socket closed: let them. */
export function drain(ms = 1500) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
