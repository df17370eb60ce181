import { defineCommand } from "citty";
import { listen } from "listhen";
import { toNodeHandler } from "h3/node";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { createServer } from "node:net";
import { createTenantBackend } from "../app.ts";
import { attachJsonClientErrors } from "../http/node-errors.ts";
import { dataDirArg, exitWith, PUBLIC_URL_KEY } from "./shared.ts";

type NodeHandler = (req: IncomingMessage, res: ServerResponse) => unknown;

function portIsFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once("error", () => resolve(false));
    probe.listen(port, host, () => probe.close(() => resolve(true)));
  });
}

export default defineCommand({
  meta: { name: "serve", description: "Start the tenantd server on the data directory" },
  args: {
    ...dataDirArg,
    port: { type: "string", description: "Port (0 picks a free one). Env PORT; default 3000", valueHint: "number" },
    host: { type: "string", description: "Interface to listen on. Env HOST; default localhost", valueHint: "address" },
    "public-url": { type: "string", description: "Public base URL used in links. Env TENANTD_PUBLIC_URL", valueHint: "url" },
  },
  async run({ args }) {
    const rawPort = args.port ?? process.env.PORT ?? "3000";
    const port = Number(rawPort);
    if (!Number.isInteger(port) || port < 0 || port > 65535) exitWith(new Error(`--port must be a number from 0 to 65535 (got ${rawPort})`));
    const hostname = args.host ?? process.env.HOST ?? "localhost";
    // A port the person asked for is theirs or nothing: listhen would quietly take another.
    if (port !== 0 && !(await portIsFree(port, hostname))) {
      exitWith(new Error(`port ${port} is in use on ${hostname}: stop the other server, or pass another --port (0 picks a free one)`));
    }
    // Listen first, so links default to the address really served when no public URL is set.
    let handle: NodeHandler = (_req, res) => res.writeHead(503, { "content-type": "application/json" }).end('{"error":"unavailable","message":"tenantd is starting; try again in a moment."}');
    const listener = await listen((req, res) => handle(req, res), { port, hostname, showURL: false, public: hostname !== "localhost" && hostname !== "127.0.0.1" });
    attachJsonClientErrors(listener.server as Server);
    const url = listener.url.replace(/\/$/, "");
    let backend;
    try {
      backend = await createTenantBackend({ dataDir: args["data-dir"], publicUrl: args["public-url"] ?? process.env.TENANTD_PUBLIC_URL ?? url });
    } catch (e) {
      await listener.close();
      exitWith(e);
    }
    handle = toNodeHandler(backend);
    // CLI commands on this directory build links (emails, webhooks) with the same base URL.
    await backend.core.db.meta.set(PUBLIC_URL_KEY, backend.core.config.publicUrl);
    const out = (s: string) => process.stdout.write(s + "\n");
    out(`tenantd listening on ${url}`);
    out(`data directory: ${backend.core.config.dataDir}`);
    const config = backend.core.config;
    if (config.publicUrl !== url) out(`public URL (used in links): ${config.publicUrl}`);
    if (config.webhooks.allowInsecure) out("webhooks: http:// and private/loopback targets allowed (TENANTD_WEBHOOKS_ALLOW_INSECURE): development only.");
    if (config.email.transport === "outbox") {
      out("email: development outbox (messages are stored and logged, not sent; read them with `tenantd mail list`). Set TENANTD_SMTP_HOST to send real mail.");
    }
    if (config.devBilling) out("billing: apps without Stripe keys use the development provider (no real payment). NODE_ENV=production turns it off.");
    if (!backend.defaultApp) out(`apps: ${(await backend.admin.listApps()).map((a) => a.name).join(", ") || "(none)"} — ids and keys: tenantd app list`);
    if (backend.defaultApp) {
      out("");
      out("Created the default app on this empty data directory:");
      out(`  app id:          ${backend.defaultApp.id}`);
      out(`  publishable key: ${backend.defaultApp.publishableKey}`);
      out("");
      out("Try it:");
      out(`  curl -X POST ${url}/api/v1/auth/signup -H 'x-service-key: ${backend.defaultApp.publishableKey}' \\`);
      out(`       -H 'content-type: application/json' -d '{"email":"me@example.com","password":"a long password"}'`);
      out("");
      out("Create your developer account (to manage apps over the admin API):");
      out(`  npx tenantd developer create --email you@example.com${args["data-dir"] ? ` --data-dir ${args["data-dir"]}` : ""}`);
    }
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      await listener.close().catch(() => {});
      await backend.close();
      process.exit(0);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  },
});
