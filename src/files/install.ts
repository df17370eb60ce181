import type { Core } from "../core.ts";

/** Hooks and settings reactions of the files area; runs for the server and the CLI alike. */
export function installFiles(core: Core): void {
  void core;
}
