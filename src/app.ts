import { H3 } from "h3";
import type { TenantBackendConfig } from "./config.ts";
import { createCore, type Core } from "./core.ts";
import { defineErrorMiddleware, errorToResponse } from "./errors.ts";
import { defineCorsMiddleware } from "./http/cors.ts";
import { defineBodyTimeoutMiddleware } from "./http/body-timeout.ts";
import { createRouter } from "./http/router.ts";
import { registerAreaRoutes } from "./areas.ts";
import { ensureDefaultApp } from "./bootstrap.ts";
import { createAdminApi, type AdminApi } from "./admin/api.ts";
import type { AppRow } from "./db/apps.ts";
import { startMaintenance } from "./maintenance.ts";

export interface TenantBackend extends H3 {
  /** Programmatic administration: the same operations as the admin API and the CLI. */
  admin: AdminApi;
  /** The shared core (database, storage, clock): for tools and tests that go under HTTP. */
  core: Core;
  /** The app created on first start of an empty database, if this start created one. */
  defaultApp: AppRow | undefined;
  /** Stops background work and closes the database. */
  close(): Promise<void>;
}

/**
 * Creates the tenantd server as an h3 app: serve it alone, `mount()` it in another h3 app,
 * wrap it with `toNodeHandler` for node:http/Express, or call `app.fetch(request)`.
 */
export async function createTenantBackend(config: TenantBackendConfig = {}): Promise<TenantBackend> {
  const core = createCore(config);
  try {
    // The app-level hook catches what h3 rejects before any middleware (a malformed
    // percent-encoded path); the middleware covers the rest, also when a host mounts us.
    const h3 = new H3({ onError: (error, event) => errorToResponse(error, event, core.log) });
    h3.use(defineErrorMiddleware(core.log));
    h3.use(defineCorsMiddleware(core));
    h3.use(defineBodyTimeoutMiddleware(core.config.bodyIdleTimeoutSeconds * 1000));
    const { router, finish } = createRouter(h3);
    registerAreaRoutes(router, core);
    finish();
    const defaultApp = core.config.bootstrap ? await ensureDefaultApp(core) : undefined;
    startMaintenance(core);
    return Object.assign(h3, { admin: createAdminApi(core), core, defaultApp, close: () => core.close() });
  } catch (e) {
    await core.close();
    throw e;
  }
}
