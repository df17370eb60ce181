// An existing node:http server that keeps its own routes and hands /api/v1/* to tenantd.
import { createServer } from "node:http";
import { createTenantBackend, toNodeHandler, attachJsonClientErrors } from "tenantd";

export async function start({ port = 3000, dataDir = "./.tenantd", logger = "info" } = {}) {
  const backend = await createTenantBackend({ dataDir, logger });
  const tenantd = toNodeHandler(backend);
  const server = createServer((req, res) => {
    if (req.url === "/health") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok");
      return;
    }
    if (req.url?.startsWith("/api/v1/")) return tenantd(req, res);
    res.writeHead(404, { "content-type": "text/plain" }).end("not here");
  });
  attachJsonClientErrors(server);
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    backend,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await backend.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url } = await start({ port: Number(process.env.PORT ?? 3000) });
  console.log(`node:http server with tenantd on ${url}`);
}
