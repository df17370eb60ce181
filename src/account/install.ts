import type { Core } from "../core.ts";

/** Hooks and settings reactions of the account area; runs for the server and the CLI alike. */
export function installAccount(core: Core): void {
  void core;
}
