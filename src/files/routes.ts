import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { requireTenant } from "../http/guards.ts";
import { readFilePart } from "./multipart.ts";
import { deleteFile, requireOwnFile, toFileInfo, uploadFile } from "./service.ts";
import { servePublicFile } from "./serve.ts";
import { createLimiter } from "../tools/limiter.ts";

/** Uploads read and stored at the same time; see registerFilesRoutes. */
export const UPLOADS_IN_MEMORY = 2;

/** HTTP routes of the files area: the tenant's upload, read and delete, and the public file URL. */
export function registerFilesRoutes(router: Router, core: Core): void {
  // An upload is held in memory (up to the file limit) between reading and storing it, so
  // only a few are read at once; the others wait with their bodies unread, which holds the
  // senders back through TCP instead of growing the heap.
  const inMemory = createLimiter(UPLOADS_IN_MEMORY);

  router.post("/api/v1/files/upload", async (event) => {
    const { app, tenantId } = await requireTenant(event, core);
    const file = await inMemory(async () => {
      const part = await readFilePart(event.req.body, event.req.headers, { maxFileBytes: core.config.files.maxBytes });
      return uploadFile(core, app, tenantId, part);
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
  router.get("/api/v1/public/files/:id/:name", (event) => servePublicFile(core, getRouterParam(event, "id")!, event.req.headers));
}
