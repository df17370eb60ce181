import type { Core } from "../core.ts";

/** Hooks and settings reactions of the data area; runs for the server and the CLI alike. */
export function installData(core: Core): void {
  void core;
}
