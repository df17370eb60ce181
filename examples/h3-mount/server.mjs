// tenantd mounted inside another h3 app under /tenantd. Its error handler is a middleware,
// so errors under the mount still answer { error, message }. publicUrl ends with the prefix:
// the links tenantd hands out (file URLs, email links, checkout pages) must include it.
import { H3, serve } from "h3";
import { createTenantBackend } from "tenantd";

export const PREFIX = "/tenantd";

/** @param {{ port?: number, dataDir?: string, logger?: import("tenantd").TenantBackendConfig["logger"], publicUrl?: string }} [options] */
export async function createParentApp({ port = 3000, dataDir = "./.tenantd", logger = "info", publicUrl } = {}) {
  const backend = await createTenantBackend({ dataDir, logger, publicUrl: publicUrl ?? `http://localhost:${port}${PREFIX}` });
  const parent = new H3();
  parent.get("/", () => ({ app: "parent" }));
  parent.mount(PREFIX, backend);
  return { parent, backend };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const port = Number(process.env.PORT ?? 3000);
  const { parent } = await createParentApp({ port });
  serve(parent, { port });
}
