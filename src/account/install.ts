import type { Core } from "../core.ts";

/**
 * Hooks of the account area; runs for the server and the CLI alike. Deletion raises
 * `tenant.deleting`/`tenant.deleted` (see delete.ts) and listens to nothing.
 */
export function installAccount(core: Core): void {
  void core;
}
