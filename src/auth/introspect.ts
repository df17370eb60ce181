import type { H3Event } from "h3";
import { toIso } from "../clock.ts";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/apps.ts";
import { checkTenant } from "../http/guards.ts";
import { effectiveSubscription, type Subscription } from "../billing/effective.ts";
import { toPublicTenant } from "./tenant-view.ts";

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
}

/**
 * What the bearer (if any) proves, for the app named by the key. Never an error for a bad
 * bearer: missing, invalid, expired, another app's or an ended session is `active: false`.
 */
export async function introspect(core: Core, app: AppRow, event: H3Event, include: IntrospectInclude[]): Promise<Introspection> {
  const wants = new Set(include);
  const auth = event.req.headers.has("authorization") ? await checkTenant(event, core) : undefined;
  const tenant = auth && !("error" in auth) && auth.app.id === app.id ? await core.db.tenants.findById(app.id, auth.tenantId) : undefined;
  if (!auth || "error" in auth || !tenant) {
    return {
      active: false,
      tenantId: null,
      appId: null,
      exp: null,
      parentTenantId: null,
      ...(wants.has("subscription") && { subscription: null }),
      ...(wants.has("tenant") && { tenant: null }),
    };
  }
  return {
    active: true,
    tenantId: tenant.id,
    appId: app.id,
    exp: toIso(auth.exp * 1000),
    // The row, not the token claim: leaving a family takes effect before the token expires.
    parentTenantId: tenant.parentTenantId,
    ...(wants.has("subscription") && { subscription: await effectiveSubscription(core, app, tenant.id) }),
    ...(wants.has("tenant") && { tenant: toPublicTenant(tenant) }),
  };
}
