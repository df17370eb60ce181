import type { Core } from "../core.ts";

/** Hooks and settings reactions of the billing area; runs for the server and the CLI alike. */
export function installBilling(core: Core): void {
  void core;
}
