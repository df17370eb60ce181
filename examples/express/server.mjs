// tenantd inside an Express app, under /backend. Express strips the mount path,
// so tenantd sees its usual /api/v1/... paths.
import express from "express";
import { toNodeHandler } from "h3/node";
import { createTenantBackend } from "tenantd";

export async function start({ port = 3000, dataDir = "./.tenantd", logger = "info" } = {}) {
  const backend = await createTenantBackend({ dataDir, logger });
  const app = express();
  app.get("/", (_req, res) => res.send("my express app"));
  // Mounted before any body parser: tenantd reads (and size-limits) request bodies itself.
  app.use("/backend", toNodeHandler(backend));
  const server = await new Promise((resolve) => {
    const s = app.listen(port, "127.0.0.1", () => resolve(s));
  });
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
  console.log(`express app on ${url}, tenantd under ${url}/backend`);
}
