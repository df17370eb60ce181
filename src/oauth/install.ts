import type { Core } from "../core.ts";

/** Hooks and settings reactions of the oauth area; runs for the server and the CLI alike. */
export function installOAuth(core: Core): void {
  void core;
}
