import type { Core } from "../core.ts";

/** Hooks and settings reactions of the webhooks area; runs for the server and the CLI alike. */
export function installWebhooks(core: Core): void {
  void core;
}
