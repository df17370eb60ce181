import type { H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import type { AppRow } from "../db/types.ts";
import { getRouterParam } from "h3";
import { requireTenant, type TenantAuth } from "../http/guards.ts";
import { registerRecordRoutes, type RecordAccess } from "../data/routes.ts";
import { recordScope } from "../data/records.ts";
import { requireMember } from "./orgs.ts";
import { permissionsOf, requirePermission } from "./roles.ts";
import { removeTenantFiles, sweepTenantBlobs } from "../files/service.ts";

/**
 * Organization records (docs/organizations.md#organization-records).
 *
 * Each organization owns its records through a "data owner": a row in tenants whose id is the
 * organization's id, which triggers on orgs make and delete with it (SQLite migration 23,
 * PostgreSQL 17). Why a row there, not an owner column or a table of its own: records, their
 * byte counters, share links, files and idempotency keys all point at tenants(id), so with the
 * organization as one more owner in that column every query, total, counter, quota, automatic
 * index and cursor of tenant records serves an organization's unchanged, and an organization's
 * list costs a tenant's list plus the membership check (which runs beside it). Relaxing the
 * foreign keys instead would have rebuilt the records table on SQLite. The row's email is its
 * id, so no one can sign in as it (a person's address holds an "@"), and every tenant list,
 * count and lookup leaves it out on `email <> id`.
 */
export const dataOwnerOf = (orgId: string): string => orgId;

/** Who may write an organization collection: roles with records.write (the default) or every member. */
function writeRule(app: AppRow, collection: string): "records.write" | "members" {
  const org = Object.hasOwn(app.settings.collections, collection) ? app.settings.collections[collection]!.org : undefined;
  return typeof org === "object" ? org.write : "records.write";
}

/**
 * The organization as the owner of the records the request reaches, once the caller is its
 * member with the permission `access` needs: 404 for an organization one is not in, 403
 * naming the permission. A removed member is refused on the next request: membership is read
 * from the store each time.
 */
export async function orgRecordAuth(core: Core, auth: TenantAuth, orgId: string, access: RecordAccess, collection: string): Promise<TenantAuth> {
  const org = await requireMember(core, auth.app, orgId, auth.tenantId);
  if (access === "read") requirePermission(auth.app, org, "records.read");
  else if (writeRule(auth.app, collection) === "records.write") requirePermission(auth.app, org, "records.write");
  return { ...auth, tenantId: dataOwnerOf(org.id), orgId: org.id };
}

/**
 * The tenant record routes, again under /api/v1/orgs/{orgId}: the same handlers, the
 * organization as owner. A read runs beside the membership check (its owner id is the org id
 * either way), so an organization's list costs about what a tenant's does on PostgreSQL too,
 * where the check is a round trip; it is answered only once the check passed. A write waits for it.
 */
export function registerOrgRecordRoutes(router: Router, core: Core): void {
  registerRecordRoutes(router, core, "/api/v1/orgs/:orgId/collections/:collection/records", "/api/v1/orgs/:orgId/batch", async (event: H3Event, access, collection) => {
    const caller = await requireTenant(event, core);
    const orgId = getRouterParam(event, "orgId") ?? "";
    const checked = orgRecordAuth(core, caller, orgId, access, collection);
    if (access === "write") return { auth: await checked };
    return { auth: { ...caller, tenantId: dataOwnerOf(orgId), orgId }, check: checked };
  });
}

/**
 * Deletes an organization with its data, as an account deletion does: its files' blobs first
 * (a storage failure stops here, 503, and nothing is deleted), then `remove`, whose cascade
 * takes the data owner row and with it the records, share links and file rows; last, blobs
 * of uploads that were in flight meanwhile go by their prefix.
 */
export async function removingOrgData(core: Core, app: AppRow, orgId: string, remove: () => Promise<boolean>): Promise<boolean> {
  await removeTenantFiles(core, app, dataOwnerOf(orgId));
  const removed = await remove();
  if (removed) await sweepTenantBlobs(core, app.id, dataOwnerOf(orgId));
  return removed;
}

/** Whether the tenant is still a member who may read the organization's records (realtime checks its subscribers with it). */
export async function mayReadOrgRecords(core: Core, appId: string, orgId: string, tenantId: string): Promise<boolean> {
  const [app, org] = await Promise.all([core.db.apps.findById(appId), core.db.orgs.asMember(appId, orgId, tenantId)]);
  return app !== undefined && org !== undefined && permissionsOf(app, org.role).has("records.read");
}

/**
 * A realtime subscription's records: the tenant's own, or with `org` an organization's that
 * the tenant may read (404 and 403 as on the record routes); 400 when the collection belongs
 * to the other kind of owner.
 */
export async function requireSubscribable(core: Core, auth: TenantAuth, spec: { collection: string; org?: string }): Promise<void> {
  recordScope(spec.org === undefined ? auth : await orgRecordAuth(core, auth, spec.org, "read", spec.collection), spec.collection);
}
