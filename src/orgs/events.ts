import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { audit, type AuditActor, type AuditOrigin } from "../audit/audit.ts";
import { enqueueEvent, type OrgEventName } from "../webhooks/events.ts";

/** Who is acting, for the trail: a tenant from a request, the app's developer (admin API), or the operator (CLI, `backend.admin`). */
export interface OrgActor {
  tenantId: string | null;
  developerId?: string;
  origin?: AuditOrigin;
  /** who the trail names when no tenant acts: a developer, or the system (a Stripe event); default the operator */
  by?: AuditActor;
}

/**
 * One organization change: an audit entry (action = event name, target = the organization)
 * and the webhook event of the same name. `tenantId` and `email` name the member concerned.
 */
export async function orgChanged(
  core: Core,
  app: AppRow,
  actor: OrgActor,
  event: OrgEventName,
  orgId: string,
  details: Record<string, unknown> = {},
  member?: { tenantId: string; email: string | null },
): Promise<void> {
  await audit(core, {
    appId: app.id,
    action: event,
    tenantId: member?.tenantId ?? actor.tenantId,
    target: orgId,
    details,
    actor: actor.tenantId ? { type: "tenant", id: actor.tenantId } : actor.developerId ? { type: "developer", id: actor.developerId } : (actor.by ?? { type: "operator" }),
    origin: actor.origin,
  });
  await enqueueEvent(core, { appId: app.id, event, tenantId: member?.tenantId ?? actor.tenantId, email: member?.email ?? null, payload: { orgId, ...details } });
  // Realtime subscribers to its records who may no longer read them stop hearing of them now.
  await core.realtime?.orgChanged(app.id, orgId);
}
