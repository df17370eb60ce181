// tenantd inside an Express 5 app that has its own JSON body parser and routes.
// tenantd answers /api/v1/**; every other request goes on to the app's own routes. It comes
// before express.json(), so its own body limits and { error, message } replies apply.
import express from "express";
import { createTenantBackend, toNodeHandler } from "tenantd";

export async function start({ port = 3000, dataDir = "./.tenantd", logger = "info", publicUrl } = {}) {
  const backend = await createTenantBackend({ dataDir, logger, publicUrl: publicUrl ?? `http://localhost:${port}` });
  const app = express();
  app.use(toNodeHandler(backend));
  app.use(express.json());
  app.get("/hello", (req, res) => res.json({ hello: req.query.name ?? "world" }));
  app.post("/echo", (req, res) => res.json({ youSent: req.body }));
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
  const port = Number(process.env.PORT ?? 3000);
  const { url } = await start({ port });
  console.log(`express app on ${url}: tenantd under ${url}/api/v1, the app's own routes beside it (${url}/hello)`);
}
