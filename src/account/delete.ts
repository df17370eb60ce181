import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { sweepTenantBlobs } from "../files/service.ts";

/** `anonymous_idle`: an anonymous tenant unused for the app's auth.anonymousIdleDays (src/auth/anonymous.ts). */
export type DeletionReason = "self_delete" | "admin_delete" | "anonymous_idle";

/**
 * Deletes a tenant permanently. `tenant.deleting` runs first so other areas can remove what
 * lives outside SQLite (blobs, a paid subscription); if one of them fails, nothing is deleted.
 * Then the tenant row goes and every row it owns with it (foreign keys cascade, sessions
 * included, so its tokens are refused at once). `tenant.deleted` carries the email captured
 * before deletion; the webhooks area queues the `tenant.deleted` event from it.
 */
export async function deleteTenant(core: Core, app: AppRow, tenantId: string, reason: DeletionReason): Promise<void> {
  const tenant = await core.db.tenants.findById(app.id, tenantId);
  if (!tenant) throw fail("not_found", "No such tenant in this app.");
  // Before anything is removed: no request of this tenant starts, and no new file lands.
  await core.db.sessions.beginTenantDeletion(app.id, tenant.id, core.clock());
  try {
    await core.hooks.emit("tenant.deleting", { app, tenantId: tenant.id });
  } catch (e) {
    await core.db.sessions.cancelTenantDeletion(app.id, tenant.id);
    throw e;
  }
  // Two deletions racing: only the one that removed the row reports it.
  if (!(await core.db.tenants.remove(app.id, tenant.id))) throw fail("not_found", "No such tenant in this app.");
  // Uploads that were already past their checks when the deletion began may have written a
  // blob since the files were listed; their rows were refused, so the blobs go by prefix.
  await sweepTenantBlobs(core, app.id, tenant.id);
  await core.hooks.emit("tenant.deleted", { app, tenantId: tenant.id, email: tenant.email, locale: tenant.locale, reason });
}
