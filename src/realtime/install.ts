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
}
