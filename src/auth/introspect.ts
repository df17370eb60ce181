import { toIso } from "../clock.ts";
import { andThen, type Awaitable } from "../awaitable.ts";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { TenantAuth } from "../http/guards.ts";
import { effectiveSubscription, type Subscription } from "../billing/effective.ts";
import { toPublicTenant } from "./tenant-view.ts";
import { jsonString } from "../tools/json-string.ts";

export type IntrospectInclude = "subscription" | "tenant";

export interface Introspection {
  active: boolean;
  tenantId: string | null;
  appId: string | null;
  /** access token expiry, ISO 8601 */
  exp: string | null;
  parentTenantId: string | null;
  subscription?: Subscription | null;
  tenant?: ReturnType<typeof toPublicTenant> | null;
  /** A developer's read-only impersonation session (the developer's id): the app must not write on its behalf. */
  impersonatedBy?: string;
}

/**
 * What the bearer proves, for the app named by the key. `auth` is the checked bearer, or
 * undefined when it was missing or refused (invalid, expired, ended): that, like another
 * app's bearer, is `active: false`, never an error.
 */
export function introspect(core: Core, app: AppRow, auth: TenantAuth | undefined, include: IntrospectInclude[]): Awaitable<Introspection> {
  const withSubscription = include.includes("subscription");
  const withTenant = include.includes("tenant");
  // Synchronous when the store is and nothing more than the bearer's state is asked for:
  // resource servers call this on every request they serve.
  const row = auth && auth.app.id === app.id ? core.db.tenants.findById(app.id, auth.tenantId, core.clock()) : undefined;
  return andThen(row, (tenant) => {
    if (!auth || !tenant) {
      return {
        active: false,
        tenantId: null,
        appId: null,
        exp: null,
        parentTenantId: null,
        ...(withSubscription && { subscription: null }),
        ...(withTenant && { tenant: null }),
      };
    }
    const answer: Introspection = {
      active: true,
      tenantId: tenant.id,
      appId: app.id,
      exp: toIso(auth.exp * 1000),
      // The row, not the token claim: leaving a family takes effect before the token expires.
      parentTenantId: tenant.parentTenantId,
      ...(auth.impersonatedBy !== undefined && { impersonatedBy: auth.impersonatedBy }),
    };
    if (!withSubscription) return withTenant ? { ...answer, tenant: toPublicTenant(tenant) } : answer;
    return effectiveSubscription(core, app, tenant.id).then((subscription) => ({
      ...answer,
      subscription,
      ...(withTenant && { tenant: toPublicTenant(tenant) }),
    }));
  });
}

const nullable = (s: string | null) => (s === null ? "null" : jsonString(s));

/**
 * The answer without `include`, as JSON written by hand: resource servers call this on every
 * request, and JSON.stringify of these five fields cost about 7,000 instructions (count.sh).
 * Answers with `include` carry nested objects and go through JSON.stringify.
 */
export function introspectionJson(x: Introspection): string {
  const imp = x.impersonatedBy === undefined ? "" : `,"impersonatedBy":${jsonString(x.impersonatedBy)}`;
  return `{"active":${x.active},"tenantId":${nullable(x.tenantId)},"appId":${nullable(x.appId)},"exp":${nullable(x.exp)},"parentTenantId":${nullable(x.parentTenantId)}${imp}}`;
}
