import { H3 } from "h3";
import type { ServerRequest } from "srvx";
import type { TenantBackendConfig } from "./config.ts";
import { ConfigError } from "./config.ts";
import { createCore, type Core } from "./core.ts";
import { errorToResponse } from "./errors.ts";
import { cacheRouteMatches } from "./http/route-cache.ts";
import { createRouter } from "./http/router.ts";
import { registerAreaRoutes } from "./areas.ts";
import { ensureDefaultApp } from "./bootstrap.ts";
import { createAdminApi, type AdminApi } from "./admin/api.ts";
import type { AppRow } from "./db/types.ts";
import { startMaintenance } from "./maintenance.ts";
import { installDashboard } from "./dashboard/install.ts";
import { createLifecycle, defineRequestMiddleware, type Lifecycle } from "./http/lifecycle.ts";
import { registerHealthRoutes } from "./http/health.ts";
import { announceStart, mountPrefixCheck } from "./embed/startup.ts";
import { fetchWithClient, type FetchClient } from "./embed/fetch.ts";
import { keepTickShape } from "./http/tick-shape.ts";
import { installMetrics, type MetricsEndpoint } from "./metrics/install.ts";
import { installServerHooks, loadServerHooks, registerServerHookRoutes } from "./server-hooks/install.ts";

export interface TenantBackend extends H3 {
  /** Programmatic administration: the same operations as the admin API and the CLI. */
  admin: AdminApi;
  /** The shared core (database, storage, clock): for tools and tests that go under HTTP. */
  core: Core;
  /** The app created on first start of an empty database, if this start created one. */
  defaultApp: AppRow | undefined;
  /**
   * Answers a fetch `Request`. The client's address keeps rate limits per client: it is read
   * from the request (srvx) or from the host's second argument (Deno's info, Bun's server,
   * @hono/node-server's env), or given as `{ ip }` (docs/embedding.md).
   */
  fetch(request: ServerRequest, client?: FetchClient): Response | Promise<Response>;
  /** Where the server is in its life (starting, serving, draining, stopped). */
  lifecycle: Lifecycle;
  /** Where `GET /metrics` is served; undefined when metrics are off (docs/deployment.md#metrics). */
  metrics: MetricsEndpoint | undefined;
  /**
   * Stops gracefully: new requests get 503 + `connection: close`, requests in flight finish
   * (up to `drainTimeoutMs`), webhook deliveries in flight and queued mail finish, then
   * storage and the database close (WAL checkpointed). Safe to call twice.
   */
  close(): Promise<void>;
}

/** Production without a chosen mail transport would store verification mail nobody reads. */
function requireMailInProduction(core: Core): void {
  if (core.config.mode !== "production" || core.config.emailChosen) return;
  throw new ConfigError(
    "tenantd config: production mode needs a way to send email. Set an SMTP server (email.smtp.host; env TENANTD_SMTP_HOST with TENANTD_SMTP_PORT, TENANTD_SMTP_USER, TENANTD_SMTP_PASS), " +
      'or, if your app sends its own email, choose the outbox explicitly (email.transport "outbox"; env TENANTD_EMAIL_TRANSPORT=outbox). See docs/deployment.md.',
  );
}

/**
 * Creates the tenantd server as an h3 app: serve it alone, `mount()` it in another h3 app,
 * wrap it with `toNodeHandler` for node:http/Express, or call `app.fetch(request)`.
 */
export async function createTenantBackend(config: TenantBackendConfig = {}): Promise<TenantBackend> {
  const core = createCore(config);
  const lifecycle = createLifecycle();
  try {
    await core.ready;
    requireMailInProduction(core);
    core.serverHooks = await loadServerHooks(config.hooks);
    // The app-level hook catches what h3 rejects before any middleware (a malformed
    // percent-encoded path); the middleware covers the rest, also when a host mounts us.
    const h3 = new H3({ onError: (error, event) => errorToResponse(error, event, core.log) });
    // Before tenantd's own middleware, so a request's time includes all of it.
    const metrics = await installMetrics(h3, core, lifecycle);
    h3.use(defineRequestMiddleware(core, lifecycle));
    h3.use(mountPrefixCheck(core));
    const { router, finish } = createRouter(h3);
    registerHealthRoutes(router, core, lifecycle);
    registerAreaRoutes(router, core);
    registerServerHookRoutes(router, core);
    installDashboard(h3, core);
    finish();
    cacheRouteMatches(h3);
    const defaultApp = core.config.bootstrap ? await ensureDefaultApp(core) : undefined;
    startMaintenance(core);
    installServerHooks(core);
    announceStart(core, config, defaultApp);
    lifecycle.ready();
    keepTickShape();
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        const { timedOut, inFlight } = await lifecycle.drain(core.config.drainTimeoutMs);
        if (timedOut) core.log.warn("drain timeout passed with requests still in flight; stopping anyway", { inFlight, drainTimeoutMs: core.config.drainTimeoutMs });
        await core.close();
        lifecycle.stopped();
      })());
    return Object.assign(h3, { admin: createAdminApi(core), core, defaultApp, lifecycle, metrics, close, fetch: fetchWithClient(h3, core) });
  } catch (e) {
    await core.close();
    throw e;
  }
}
