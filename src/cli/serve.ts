import { defineCommand } from "citty";
import { toNodeHandler } from "h3/node";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";
import { createTenantBackend, type TenantBackend } from "../app.ts";
import { loadConfig } from "../config-file.ts";
import { errorBody } from "../errors.ts";
import { attachJsonClientErrors } from "../http/node-errors.ts";
import { exitWith, PUBLIC_URL_KEY } from "./shared.ts";
import { flagLayer, serveArgs } from "./serve-args.ts";
import { printBanner } from "./serve-banner.ts";
import { SERVE_BANNER } from "../embed/startup.ts";

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

/** Answers while the backend is not there yet (starting): 503, so probes and clients wait. */
const starting: NodeHandler = (_req, res) =>
  res.writeHead(503, { "content-type": "application/json; charset=utf-8", "retry-after": "1" }).end(errorBody("unavailable", "tenantd is starting; try again in a moment."));

const out = (s: string) => process.stdout.write(s + "\n");

/**
 * SIGINT/SIGTERM: stop accepting connections, let requests in flight finish (new ones on
 * open keep-alive connections get 503 + `connection: close`), close the backend, print
 * `stopped`, exit 0. A second signal stops at once with exit code 1.
 */
function handleSignals(server: Server, backend: TenantBackend): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      out(`${signal} again: stopping now, without waiting for requests in flight.`);
      process.exit(1);
    }
    stopping = true;
    out(`${signal}: draining (requests in flight may take up to ${backend.core.config.drainTimeoutMs} ms); send it again to stop at once.`);
    // Only the listening socket: http.Server#close would also drop idle keep-alive
    // connections, whose next request should instead hear 503 + connection: close.
    NetServer.prototype.close.call(server);
    try {
      await backend.close();
    } catch (e) {
      process.stderr.write(`tenantd: error while stopping: ${(e as Error).message}\n`);
    }
    server.closeAllConnections();
    out("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}

export default defineCommand({
  meta: { name: "serve", description: "Start the tenantd server on the data directory" },
  args: serveArgs(),
  async run({ args }) {
    let loaded;
    try {
      loaded = await loadConfig(flagLayer(args), process.env);
    } catch (e) {
      exitWith(e);
    }
    const { config } = loaded;
    const port = config.port ?? 3000;
    const host = config.host ?? "localhost";
    let handle: NodeHandler = starting;
    const server = createServer((req, res) => handle(req, res));
    attachJsonClientErrors(server);
    // Listen first, so links default to the address really served when no public URL is set.
    try {
      await listen(server, port, host);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      exitWith(
        code === "EADDRINUSE"
          ? new Error(`port ${port} is in use on ${host}: stop the other server, or pass another --port (0 picks a free one)`)
          : new Error(`cannot listen on ${host}:${port}: ${(e as Error).message}`),
      );
    }
    const address = server.address() as { port: number };
    const url = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`;
    let backend: TenantBackend;
    try {
      backend = await createTenantBackend({ ...config, publicUrl: config.publicUrl ?? url, [SERVE_BANNER]: true } as typeof config);
    } catch (e) {
      server.close();
      exitWith(e);
    }
    handle = toNodeHandler(backend);
    // CLI commands on this directory build links (emails, webhooks) with the same base URL.
    await backend.core.db.meta.set(PUBLIC_URL_KEY, backend.core.config.publicUrl);
    handleSignals(server, backend);
    await printBanner(backend, url, { file: loaded.file, dataDirFlag: args["data-dir"] as string | undefined });
  },
});
