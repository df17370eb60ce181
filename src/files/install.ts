import type { Core } from "../core.ts";
import { removeAppFiles, removeTenantFiles } from "./service.ts";

/** Hooks of the files area; runs for the server and the CLI alike. */
export function installFiles(core: Core): void {
  // Blobs live outside SQLite, so the cascade that drops the rows cannot drop them.
  core.hooks.on("tenant.deleting", ({ app, tenantId }) => removeTenantFiles(core, app, tenantId));
  core.hooks.on("app.deleting", ({ app }) => removeAppFiles(core, app));
}
