import type { H3Event } from "h3";
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

const mountChecked = new WeakSet<Core>();

/**
 * Links are built on `publicUrl`, and a host that mounts tenantd under a prefix (h3's
 * `mount`, Express's `app.use("/backend", …)`) hides that prefix from it: say so on the first
 * request when `publicUrl` does not end with it.
 */
export function checkMountPrefix(core: Core, prefix: string): void {
  if (mountChecked.has(core)) return;
  mountChecked.add(core);
  const path = new URL(core.config.publicUrl).pathname.replace(/\/+$/, "");
  if (prefix === "" || path.endsWith(prefix)) return;
  core.log.warn(
    `tenantd is mounted under ${prefix}, but publicUrl (${core.config.publicUrl}) does not end with it: file URLs, email links, checkout pages and OAuth callbacks will miss the prefix. ` +
      `Set publicUrl to the address clients reach it at, e.g. createTenantBackend({ publicUrl: "https://your-host${prefix}" }).`,
  );
}

/** The prefix a host stripped: the request's own path minus the path tenantd is shown. */
export function strippedPrefix(fullPath: string, seenPath: string): string {
  return fullPath !== seenPath && fullPath.endsWith(seenPath) ? fullPath.slice(0, fullPath.length - seenPath.length) : "";
}

/** h3's `mount`: tenantd's middleware sees the path without the parent's prefix, the request keeps it. */
export function mountPrefixCheck(core: Core) {
  return (event: H3Event, next: () => unknown) => {
    if (!mountChecked.has(core)) checkMountPrefix(core, strippedPrefix(new URL(event.req.url).pathname, event.url.pathname));
    return next();
  };
}
