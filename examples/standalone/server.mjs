// tenantd on its own: the same as `npx tenantd serve`, written out.
import { createServer } from "node:http";
import { createTenantBackend, toNodeHandler, attachJsonClientErrors } from "tenantd";

export async function start({ port = 3000, dataDir = "./.tenantd", logger = "info" } = {}) {
  const backend = await createTenantBackend({ dataDir, logger });
  const server = createServer(toNodeHandler(backend));
  attachJsonClientErrors(server);
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return {
    url,
    backend,
    close: async () => {
      await new Promise((resolve) => server.close(resolve));
      await backend.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url, backend } = await start({ port: Number(process.env.PORT ?? 3000) });
  console.log(`tenantd on ${url}`);
  if (backend.defaultApp) console.log(`default app ${backend.defaultApp.id}, key ${backend.defaultApp.publishableKey}`);
}
