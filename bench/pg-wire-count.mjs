// Counts what one tenantd request costs PostgreSQL in messages, not time (the machine the
// bench runs on is shared): a TCP proxy between tenantd and PostgreSQL reads the frontend
// protocol and counts statements (Execute and simple Query messages) and round trips (a Sync
// or simple Query sent while no earlier one awaits its ReadyForQuery: pipelined statements
// share a round trip). Run on a built dist/:
//   node bench/pg-wire-count.mjs [sign-ins=200] [--cpu-prof-dir=dir]
// prints, per passkey sign-in (options + sign-in) and per password login, the round trips,
// the statements and the statements' text with their counts.
import { createServer, connect } from "node:net";
import { Session } from "node:inspector/promises";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createJiti } from "jiti";
import { createTenantBackend } from "../dist/index.js";
import { startPostgresServer } from "./postgres-server.mjs";
import { BENCH_ORIGIN } from "./dataset.mjs";

const { softAuthenticator } = await createJiti(import.meta.url).import("../test/_passkey.ts");
const N = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 200);
const profDir = process.argv.find((a) => a.startsWith("--cpu-prof-dir="))?.split("=")[1];

let counting = false;
const tally = { trips: 0, statements: 0, texts: new Map() };

/** Frontend messages after the startup packet: a type byte and a length that counts itself. */
function frontendReader(link) {
  let buf = Buffer.alloc(0);
  let started = false;
  const names = new Map(); // prepared statement name → text
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    if (!started) {
      if (buf.length < 4) return;
      const len = buf.readInt32BE(0);
      if (buf.length < len) return;
      // An SSLRequest (8 bytes, code 80877103) is followed by the real startup packet.
      const ssl = len === 8 && buf.readInt32BE(4) === 80877103;
      buf = buf.subarray(len);
      if (!ssl) started = true;
      if (!started) return;
    }
    while (buf.length >= 5) {
      const type = String.fromCharCode(buf[0]);
      const len = buf.readInt32BE(1);
      if (buf.length < len + 1) return;
      const body = buf.subarray(5, len + 1);
      buf = buf.subarray(len + 1);
      if (type === "P") {
        const end = body.indexOf(0);
        const name = body.subarray(0, end).toString();
        const text = body.subarray(end + 1, body.indexOf(0, end + 1)).toString();
        names.set(name, text);
        names.set("", text);
      } else if (type === "B") {
        const portalEnd = body.indexOf(0);
        const stmt = body.subarray(portalEnd + 1, body.indexOf(0, portalEnd + 1)).toString();
        names.set(" bound", names.get(stmt) ?? names.get("") ?? "?");
      }
      if (!counting) continue;
      if (type === "E" || type === "Q") {
        tally.statements++;
        const text = type === "Q" ? body.subarray(0, body.indexOf(0)).toString() : names.get(" bound");
        const key = String(text).replace(/\s+/g, " ").slice(0, 150);
        tally.texts.set(key, (tally.texts.get(key) ?? 0) + 1);
      }
      if (type === "S" || type === "Q") {
        if (link.outstanding === 0) tally.trips++;
        link.outstanding++;
      }
    }
  };
}

/** Backend messages: counts the ReadyForQuery answers. */
function backendReader(link) {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    while (buf.length >= 5) {
      const len = buf.readInt32BE(1);
      if (buf.length < len + 1) return;
      if (buf[0] === 0x5a && link.outstanding > 0) link.outstanding--;
      buf = buf.subarray(len + 1);
    }
  };
}

async function proxy(target) {
  const port = Number(target.port);
  const host = target.hostname;
  const server = createServer((client) => {
    const upstream = connect(port, host);
    const link = { outstanding: 0 };
    const read = frontendReader(link);
    const answer = backendReader(link);
    client.on("data", (d) => {
      read(d);
      upstream.write(d);
    });
    upstream.on("data", (d) => {
      answer(d);
      client.write(d);
    });
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.end());
    upstream.on("close", () => client.end());
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return server;
}

const t0 = Date.now();
const step = (what) => process.stderr.write(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${what}\n`);
const pg = await startPostgresServer();
step("postgres started");
const url = new URL(pg.url);
const server = await proxy(url);
url.host = `127.0.0.1:${server.address().port}`;
const dataDir = mkdtempSync(join(tmpdir(), "tenantd-pgwire-"));
const backend = await createTenantBackend({ dataDir, database: { url: url.href }, logger: "error", rateLimit: false });
step("tenantd opened");
try {
  const app = backend.defaultApp;
  await backend.admin.updateApp(app.id, { settings: { corsOrigins: [BENCH_ORIGIN] } });
  const key = { "x-service-key": app.publishableKey, "content-type": "application/json" };
  const call = async (path, headers, body) => {
    const res = await backend.fetch(new Request(`http://localhost${path}`, { method: "POST", headers, body: JSON.stringify(body) }));
    const json = await res.json();
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
  const email = "pk@example.com";
  const password = "a long password 1";
  const s = await call("/api/v1/auth/signup", key, { email, password });
  const bearer = { authorization: `Bearer ${s.accessToken}`, "x-service-app": app.id, "content-type": "application/json" };
  const device = softAuthenticator(BENCH_ORIGIN);
  await call("/api/v1/auth/passkeys/register", bearer, { credential: device.create(await call("/api/v1/auth/passkeys/register/options", bearer, {})) });

  step("passkey registered");
  const passkeySignIn = async () => {
    const options = await call("/api/v1/auth/passkeys/options", key, {});
    await call("/api/v1/auth/passkeys/sign-in", key, { credential: device.get(options, { counter: 0 }) });
  };
  const passwordLogin = () => call("/api/v1/auth/login", key, { email, password });

  const measure = async (label, op, n) => {
    for (let i = 0; i < 20; i++) await op(); // warm: caches filled, statements prepared
    step(`${label} warmed`);
    let session;
    if (profDir) {
      session = new Session();
      session.connect();
      await session.post("Profiler.enable");
      await session.post("Profiler.start");
    }
    tally.trips = tally.statements = 0;
    tally.texts.clear();
    counting = true;
    const cpu = process.cpuUsage();
    for (let i = 0; i < n; i++) await op();
    const used = process.cpuUsage(cpu);
    counting = false;
    if (session) {
      const { profile } = await session.post("Profiler.stop");
      writeFileSync(join(profDir, `${label}.cpuprofile`), JSON.stringify(profile));
      session.disconnect();
    }
    console.log(`${label}: ${(tally.trips / n).toFixed(2)} round trips, ${(tally.statements / n).toFixed(2)} statements, ${Math.round((used.user + used.system) / n)} µs of this process's CPU (tenantd, the proxy and the software authenticator: a rough figure) per operation`);
    for (const [text, count] of [...tally.texts].sort((a, b) => b[1] - a[1])) console.log(`  ${(count / n).toFixed(2)}  ${text}`);
  };
  await measure("passkey-sign-in", passkeySignIn, N);
  await measure("password-login", passwordLogin, Math.max(10, Math.round(N / 10)));
} finally {
  await backend.close();
  server.close();
  await pg.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
