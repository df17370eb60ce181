import type { Core } from "../core.ts";
import { createRealtimeHub } from "./hub.ts";

/** The realtime hub of the core, and the tenant events other areas raise (docs/realtime.md). */
export function installRealtime(core: Core): void {
  const hub = createRealtimeHub(core);
  core.realtime = hub;
  core.onClose(() => hub.close());
  core.hooks.on(
    "billing.subscriptionChanged",
    ({ app, tenantId, planId, status }) => hub.tenantEvent(app.id, tenantId, "subscription", { planId, status }),
    { internal: true },
  );
  // A new account made through a family invite (the invite's consume) joins at its creation:
  // the family's owner hears of it as of an existing account's join (src/family/join.ts).
  core.hooks.on(
    "tenant.created",
    ({ app, tenant }) => (tenant.parentTenantId === null ? undefined : hub.tenantEvent(app.id, tenant.parentTenantId, "family", { change: "member_joined", memberTenantId: tenant.id })),
    { internal: true },
  );
}
