import type { Core } from "../core.ts";
import { audit, type AuditOrigin } from "./audit.ts";

/**
 * The audit trail's listeners: a client's wrong passwords on a tenant account reaching the
 * point where it must wait (auth/login-backoff.ts) are recorded once per run of failures,
 * not each one, so a guessing client cannot flood the trail.
 */
export function installAudit(core: Core): void {
  core.hooks.on("signIn.backoffStarted", async ({ account, client, failures }) => {
    const [kind, appId, email] = account.split("|");
    if (kind !== "tenant" || !appId || email === undefined) return;
    const tenant = await core.db.tenants.findByEmail(appId, decodeURIComponent(email));
    await audit(core, {
      appId,
      action: "tenant.sign_in_failures",
      tenantId: tenant?.id ?? null,
      target: tenant ? null : decodeURIComponent(email),
      actor: { type: "system" },
      origin: { ip: client },
      details: { failures },
    });
  });
}

/** A completed sign-in that ends in a redirect (social login), with the callback request's origin. */
export async function auditSignIn(core: Core, appId: string, tenantId: string, method: string, origin?: AuditOrigin): Promise<void> {
  await audit(core, { appId, action: "tenant.signed_in", tenantId, actor: { type: "tenant", id: tenantId }, details: { method }, origin });
}
