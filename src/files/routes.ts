import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";

/** HTTP routes of the files area (filled in by its issue). */
export function registerFilesRoutes(router: Router, core: Core): void {
  void router;
  void core;
}
