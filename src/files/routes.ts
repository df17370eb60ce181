import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { clientIp, requireTenant } from "../http/guards.ts";
import { requestBodyChunks } from "../http/body-chunks.ts";
import { readFilePart } from "./multipart.ts";
import { deleteFile, requireOwnFile, toFileInfo, uploadFile } from "./service.ts";
import { servePublicFile } from "./serve.ts";
import { openSpool } from "./blob-io.ts";
import { createUploadSlots } from "./upload-slots.ts";

/** HTTP routes of the files area: the tenant's upload, read and delete, and the public file URL. */
export function registerFilesRoutes(router: Router, core: Core): void {
  // An upload streams to a temp file as it arrives, so nothing server-wide waits on a slow
  // sender; what a tenant or an address may have in flight at once is capped.
  const slots = createUploadSlots();

  router.post("/api/v1/files/upload", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const file = await slots(`${app.id}|${tenantId}`, clientIp(event, core), async () => {
      const spool = await openSpool(core);
      try {
        const body = requestBodyChunks(event, core.config.bodyIdleTimeoutSeconds * 1000);
        const part = await readFilePart(body, event.req.headers, { maxFileBytes: core.config.files.maxBytes }, spool);
        return await uploadFile(core, app, tenantId, part, spool);
      } finally {
        await spool.discard();
      }
    });
    event.res.status = 201;
    return { file: toFileInfo(core, file) };
  });

  router.get("/api/v1/files/:id", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    return { file: toFileInfo(core, await requireOwnFile(core, app, tenantId, getRouterParam(event, "id")!)) };
  });

  router.delete("/api/v1/files/:id", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    await deleteFile(core, app, tenantId, getRouterParam(event, "id")!);
    event.res.status = 204;
    return null;
  });

  // No auth: the unguessable id is the capability. The name segment is cosmetic.
  router.get("/api/v1/public/files/:id/:name", (event) => servePublicFile(core, getRouterParam(event, "id")!, event.req.headers, event.req.method));
}
