import { createRequire } from "node:module";
import type Stripe from "stripe";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { openAppSecret } from "../apps/settings.ts";

let stripeClass: typeof Stripe | undefined;
/**
 * The Stripe library, loaded on first use: CLI commands and servers whose apps never touch
 * Stripe do not pay its startup cost. A synchronous require keeps the callers synchronous.
 */
export function loadStripe(): typeof Stripe {
  return (stripeClass ??= createRequire(import.meta.url)("stripe") as typeof Stripe);
}

const clients = new WeakMap<Core, Map<string, Stripe>>();

/**
 * The app's Stripe client, or null when the app has no Stripe secret key (then the
 * development provider is used). Cached per app and sealed key, so a new key gets a new
 * client. `config.stripeApi` points it elsewhere (tests use a local fake).
 */
export function stripeFor(core: Core, app: AppRow): Stripe | null {
  const sealed = app.settings.billing.stripeSecretKey;
  if (!sealed) return null;
  let cache = clients.get(core);
  if (!cache) clients.set(core, (cache = new Map()));
  const cacheKey = `${app.id}:${sealed}`;
  let client = cache.get(cacheKey);
  if (!client) {
    const api = core.config.stripeApi;
    const StripeClient = loadStripe();
    client = new StripeClient(openAppSecret(core.secrets, sealed, app.id), {
      maxNetworkRetries: 1,
      timeout: 20_000,
      telemetry: false,
      appInfo: { name: "tenantd" },
      ...(api ? { host: api.host, port: api.port, protocol: api.protocol } : {}),
    });
    for (const key of cache.keys()) if (key.startsWith(`${app.id}:`)) cache.delete(key);
    cache.set(cacheKey, client);
  }
  return client;
}

export function requireStripe(core: Core, app: AppRow): Stripe {
  const stripe = stripeFor(core, app);
  if (!stripe) throw fail("conflict", "This app has no Stripe secret key: set settings.billing.stripeSecretKey first.");
  return stripe;
}

/** Runs a Stripe call; Stripe's refusals become 400s naming Stripe, outages 502. */
export async function callStripe<T>(core: Core, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof loadStripe().errors.StripeInvalidRequestError) throw fail("invalid_request", `Stripe refused to ${what}: ${e.message}`);
    if (e instanceof loadStripe().errors.StripeAuthenticationError) throw fail("provider_error", `Stripe refused the app's secret key while trying to ${what}. Check settings.billing.stripeSecretKey.`);
    core.log.error("stripe call failed", { what, error: e instanceof Error ? e.message : String(e) });
    throw fail("provider_error", `Could not reach Stripe to ${what}. Try again in a moment.`);
  }
}

export function isStripeMissing(e: unknown): boolean {
  return e instanceof loadStripe().errors.StripeInvalidRequestError && (e.statusCode === 404 || e.code === "resource_missing");
}
