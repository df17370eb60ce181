import type { TenantBackendConfig } from "../config.ts";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";

/** Set by `tenantd serve`, whose banner says the same to a person: the log lines are for embedders. */
export const SERVE_BANNER = Symbol("tenantd.serveBanner");

/**
 * What an embedder must know once, on start: the default app's id and publishable key (only
 * this start has them: `backend.defaultApp` is undefined on every later one), and that links
 * point at the default base URL when `publicUrl` was not set.
 */
export function announceStart(core: Core, input: TenantBackendConfig & { [SERVE_BANNER]?: true }, defaultApp: AppRow | undefined): void {
  if (input[SERVE_BANNER]) return;
  if (defaultApp) {
    core.log.info(
      `created the default app on this empty database: app id ${defaultApp.id}, publishable key ${defaultApp.publishableKey} ` +
        "(send it as x-service-key; list apps later with `npx tenantd app list`)",
    );
  }
  if (input.publicUrl === undefined && !process.env.TENANTD_PUBLIC_URL) {
    core.log.warn(
      `publicUrl is not set: links tenantd hands out (file URLs, email links, checkout pages, OAuth callbacks) start with ${core.config.publicUrl}. ` +
        "Pass createTenantBackend({ publicUrl: \"https://your-host\" }) (or TENANTD_PUBLIC_URL) with the address clients reach this server at.",
    );
  }
}
