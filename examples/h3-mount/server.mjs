// tenantd mounted inside another h3 app under /tenantd. Its error handler is a middleware,
// so errors under the mount still answer { error, message }.
import { H3, serve } from "h3";
import { createTenantBackend } from "tenantd";

export async function createParentApp({ dataDir = "./.tenantd", logger = "info" } = {}) {
  const backend = await createTenantBackend({ dataDir, logger });
  const parent = new H3();
  parent.get("/", () => ({ app: "parent" }));
  parent.mount("/tenantd", backend);
  return { parent, backend };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { parent } = await createParentApp();
  serve(parent, { port: Number(process.env.PORT ?? 3000) });
}
