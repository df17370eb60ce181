import type { Core } from "../core.ts";
import type { AppRow } from "../db/apps.ts";
import { fail } from "../errors.ts";

export type DeletionReason = "self_delete" | "admin_delete";

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
  await core.hooks.emit("tenant.deleting", { app, tenantId: tenant.id });
  // Two deletions racing: only the one that removed the row reports it.
  if (!(await core.db.tenants.remove(app.id, tenant.id))) throw fail("not_found", "No such tenant in this app.");
  await core.hooks.emit("tenant.deleted", { app, tenantId: tenant.id, email: tenant.email, locale: tenant.locale, reason });
}
