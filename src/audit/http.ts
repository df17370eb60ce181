import { getRequestIP, type H3Event } from "h3";
import type { Core } from "../core.ts";
import { resolveClientAddress } from "../http/trust-proxy.ts";
import { requestIdOf } from "../http/lifecycle.ts";
import { audit, type AuditActor, type AuditEntry, type AuditInput, type AuditOrigin } from "./audit.ts";

/** The client's address (through trusted proxies, docs/deployment.md), its user agent and the request id. */
export function requestOrigin(event: H3Event, core: Core): AuditOrigin {
  return {
    ip: resolveClientAddress(getRequestIP(event), event.req.headers.get("x-forwarded-for"), core.config.trustProxy) ?? null,
    client: event.req.headers.get("user-agent"),
    requestId: requestIdOf(event) ?? null,
  };
}

/** The developer a request authenticated as (requireDeveloper notes it), if any. */
export function developerActor(event: H3Event): AuditActor | undefined {
  const id = (event.context as { developerId?: string }).developerId;
  return id ? { type: "developer", id } : undefined;
}

/**
 * `audit()` for an action a request did: the origin is the request's, the actor the
 * signed-in developer unless given (a tenant's own action names the tenant).
 */
export function auditRequest(core: Core, event: H3Event, input: Omit<AuditInput, "origin">): Promise<AuditEntry> {
  return audit(core, { ...input, actor: input.actor ?? developerActor(event) ?? { type: "system" }, origin: requestOrigin(event, core) });
}

/** A tenant's own action, from this request. */
export const asTenant = (tenantId: string): AuditActor => ({ type: "tenant", id: tenantId });

/** A tenant's own action, from this request, with nothing more to say than its name. */
export const auditTenant = (core: Core, event: H3Event, appId: string, action: string, tenantId: string) =>
  auditRequest(core, event, { appId, action, tenantId, actor: asTenant(tenantId) });

/** A completed sign-in (`details.method`: "password", "passkey", "password+totp"…), from this request. */
export const auditSignedIn = (core: Core, event: H3Event, appId: string, tenantId: string, method: string) =>
  auditRequest(core, event, { appId, action: "tenant.signed_in", tenantId, actor: asTenant(tenantId), details: { method } });
