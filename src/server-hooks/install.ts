import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import * as v from "valibot";
import { getQuery, getRouterParams, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { ConfigError } from "../config.ts";
import { requireDeveloper, requireTenant } from "../http/guards.ts";
import { readJson } from "../http/body.ts";
import { toIso } from "../clock.ts";
import { runHook } from "./run.ts";
import { NODE_NAME, parseSchedule, startCron } from "./cron.ts";
import type { HookApp, ServerHooks } from "./types.ts";

const ROUTE_KEY = /^(GET|POST|PUT|PATCH|DELETE) (\/[A-Za-z0-9_\-./:]*)$/;

/** The hooks module named in the config (a path), loaded with jiti for TypeScript, or the object given in code. */
export async function loadServerHooks(given: ServerHooks | string | undefined): Promise<ServerHooks | undefined> {
  if (given === undefined) return undefined;
  if (typeof given !== "string") return checkHooks(given, "createTenantBackend({ hooks })");
  const path = resolve(given);
  let loaded: unknown;
  try {
    if (/\.[mc]?ts$/.test(path)) {
      const { createJiti } = await import("jiti");
      loaded = await createJiti(import.meta.url).import(path, { default: true });
    } else {
      loaded = ((await import(pathToFileURL(path).href)) as { default?: unknown }).default;
    }
  } catch (e) {
    throw new ConfigError(`tenantd config: cannot load the hooks module ${path}: ${(e as Error).message}`);
  }
  if (typeof loaded !== "object" || loaded === null) throw new ConfigError(`tenantd config: the hooks module ${path} must export default defineHooks({ … }).`);
  return checkHooks(loaded as ServerHooks, path);
}

/** Mistakes in the hooks module stop the start, naming what is wrong, rather than surfacing at a request. */
function checkHooks(hooks: ServerHooks, where: string): ServerHooks {
  const bad = (m: string) => new ConfigError(`tenantd config: hooks (${where}): ${m}`);
  for (const key of Object.keys(hooks.routes ?? {})) {
    if (!ROUTE_KEY.test(key)) throw bad(`route "${key}" must read "<METHOD> /path" (GET, POST, PUT, PATCH or DELETE; :name for a parameter).`);
  }
  const names = new Set<string>();
  for (const job of hooks.cron ?? []) {
    if (!job?.name || typeof job.fn !== "function") throw bad("each cron entry is cron(name, schedule, fn).");
    if (names.has(job.name)) throw bad(`two cron jobs are named "${job.name}": names must be unique (a run is claimed by name).`);
    names.add(job.name);
    try {
      parseSchedule(job.schedule);
    } catch (e) {
      throw bad(`cron job "${job.name}": ${(e as Error).message}.`);
    }
  }
  if (hooks.timeoutMs !== undefined && !(Number.isInteger(hooks.timeoutMs) && hooks.timeoutMs > 0)) throw bad("timeoutMs must be a whole number of milliseconds.");
  return hooks;
}

const appOf = (app: { id: string; name: string }): HookApp => ({ id: app.id, name: app.name });

/** Wires the operator's auth and billing hooks to the events the areas raise, and starts the cron jobs (a server only). */
export function installServerHooks(core: Core): void {
  const hooks = core.serverHooks;
  if (!hooks) return;
  const { auth, billing } = hooks;
  if (auth?.afterSignup) {
    const fn = auth.afterSignup;
    core.hooks.on("tenant.created", ({ app, tenant, provider }) =>
      runHook(core, "auth.afterSignup", () => fn({ app: appOf(app), tenantId: tenant.id, email: tenant.email, method: provider ? `oauth:${provider}` : "password" })),
    );
  }
  if (auth?.afterLogin) {
    const fn = auth.afterLogin;
    // Every sign-in, by password or provider, is an audit entry: one place sees them all.
    core.hooks.on("audit.recorded", async ({ entry, app }) => {
      if (entry.action !== "tenant.signed_in" || !entry.tenantId) return;
      await runHook(core, "auth.afterLogin", () => fn({ app: appOf(app), tenantId: entry.tenantId!, method: String(entry.details?.method ?? "password") }));
    });
  }
  if (auth?.afterDelete) {
    const fn = auth.afterDelete;
    core.hooks.on("tenant.deleted", ({ app, tenantId, email, reason }) => runHook(core, "auth.afterDelete", () => fn({ app: appOf(app), tenantId, email, reason })));
  }
  if (billing?.subscriptionChanged) {
    const fn = billing.subscriptionChanged;
    core.hooks.on("billing.subscriptionChanged", ({ app, ...change }) => runHook(core, "billing.subscriptionChanged", () => fn({ app: appOf(app), ...change })));
  }
  if (hooks.cron?.length) startCron(core, hooks.cron);
}

async function bodyOf(event: H3Event, core: Core): Promise<unknown> {
  if (!(event.req.headers.get("content-type") ?? "").toLowerCase().includes("json")) return undefined;
  return readJson(event, v.unknown(), core.config.maxJsonBytes);
}

/** The operator's routes under /api/v1/x/, each behind the tenant bearer; and the admin view of cron runs. */
export function registerServerHookRoutes(router: Router, core: Core): void {
  for (const [key, handler] of Object.entries(core.serverHooks?.routes ?? {})) {
    const [, method, path] = ROUTE_KEY.exec(key)!;
    const add = router[method!.toLowerCase() as "get" | "post" | "put" | "patch" | "delete"];
    add(`/api/v1/x${path === "/" ? "" : path}`, async (event) => {
      const auth = await requireTenant(event, core);
      const body = await bodyOf(event, core);
      const request = event.req as unknown as Request;
      const out = await runHook(core, `routes["${key}"]`, () =>
        handler({ app: appOf(auth.app), tenantId: auth.tenantId, request, params: getRouterParams(event, { decode: true }), query: getQuery(event) as Record<string, string>, body, impersonatedBy: auth.impersonatedBy }),
      );
      if (out instanceof Response) return out;
      if (out === undefined) {
        event.res.status = 204;
        return null;
      }
      return out;
    });
  }

  router.get("/api/v1/admin/cron", async (event) => {
    await requireDeveloper(event, core);
    const runs = await core.db.cron.recent(20);
    const defined = core.serverHooks?.cron ?? [];
    const names = [...new Set([...defined.map((j) => j.name), ...runs.map((r) => r.name)])].sort();
    return {
      node: NODE_NAME,
      jobs: names.map((name) => ({
        name,
        schedule: defined.find((j) => j.name === name)?.schedule ?? null,
        runs: runs
          .filter((r) => r.name === name)
          .map((r) => ({ scheduledAt: toIso(r.slot)!, node: r.node, startedAt: toIso(r.startedAt)!, finishedAt: toIso(r.finishedAt), status: r.status, error: r.error })),
      })),
    };
  });
}
