import * as v from "valibot";
import { getQuery, getRouterParam, type H3Event } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput } from "../http/body.ts";
import { requireDeveloper, requireOwnApp, type TenantAuth } from "../http/guards.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { tenantBilling } from "../billing/grants.ts";
import { listInviteTokens } from "../invites/tokens.ts";
import { listRecords, RECORD_LIMITS } from "../data/records.ts";
import { MAX_CURSOR_CHARS } from "../data/cursor.ts";
import { deleteFile, requireOwnFile, toFileInfo } from "../files/service.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";
import type { AppRow, TenantRow } from "../db/types.ts";
import { auditRequest } from "../audit/http.ts";

export const whole = (min: number, max: number, name: string) =>
  v.pipe(v.string(`${name} must appear once`), v.regex(/^\d{1,16}$/, `${name} must be a whole number`), v.transform(Number), v.minValue(min, `${name} must be at least ${min}`), v.maxValue(max, `${name} must be at most ${max}`));
const isoDate = (name: string) =>
  v.pipe(v.string(`${name} must appear once`), v.check((s) => !Number.isNaN(Date.parse(s)), `${name} must be a date like 2026-01-31 or an ISO 8601 time`), v.transform((s) => Date.parse(s)));

export const TenantSearchQuery = v.object({
  email: v.optional(v.string("email must appear once")),
  verified: v.optional(v.picklist(["true", "false"], "verified must be true or false")),
  plan: v.optional(v.string("plan must appear once")),
  createdFrom: v.optional(isoDate("createdFrom")),
  createdTo: v.optional(isoDate("createdTo")),
  sort: v.optional(v.picklist(["createdAt", "-createdAt", "email", "-email"], "sort must be createdAt, -createdAt, email or -email"), "-createdAt"),
  limit: v.optional(whole(1, 1000, "limit"), "50"),
  offset: v.optional(whole(0, Number.MAX_SAFE_INTEGER, "offset"), "0"),
});
export const RecordsQuery = v.object({
  filter: v.optional(v.string("filter must appear once")),
  sort: v.optional(v.string("sort must appear once")),
  limit: v.optional(whole(1, RECORD_LIMITS.maxLimit, "limit")),
  offset: v.optional(whole(0, Number.MAX_SAFE_INTEGER, "offset")),
  after: v.optional(v.pipe(v.string("after must appear once"), v.maxLength(MAX_CURSOR_CHARS, "after is too long to be a cursor"))),
});
export const FilesQuery = v.object({ limit: v.optional(whole(1, 200, "limit"), "50"), offset: v.optional(whole(0, Number.MAX_SAFE_INTEGER, "offset"), "0") });

/** Image types a browser displays without running anything; the preview serves only these. */
const PREVIEWABLE = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]);

/**
 * The records API's own list function runs for a tenant named by the developer: it reads
 * only the app and tenant of its auth argument, so the developer's view is the tenant's view.
 */
export const asTenant = (app: AppRow, tenant: TenantRow): TenantAuth => ({ app, tenantId: tenant.id, sessionId: "", parentTenantId: tenant.parentTenantId, exp: 0 });

/** The signed-in developer's own app named by `:appId`, and its tenant named by `:tenantId` (id or email). */
export function adminLookups(core: Core) {
  const ownApp = async (event: H3Event) => {
    const { developer } = await requireDeveloper(event, core);
    return requireOwnApp(core, developer, getRouterParam(event, "appId"));
  };
  const tenantOf = async (event: H3Event) => {
    const app = await ownApp(event);
    return { app, tenant: await requireTenantRef(core, app, decodeURIComponent(getRouterParam(event, "tenantId") ?? "")) };
  };
  return { ownApp, tenantOf };
}

/** Developer views of an app's tenants: search, one tenant's whole page, records, files. */
export function registerTenantAdminRoutes(router: Router, core: Core): void {
  const base = "/api/v1/admin/apps/:appId/tenants";
  const { ownApp, tenantOf } = adminLookups(core);

  router.get(base, async (event) => {
    const app = await ownApp(event);
    const q = parseInput(TenantSearchQuery, getQuery(event), "query");
    const { tenants, total } = await core.db.admin.searchTenants(app.id, {
      email: q.email?.trim().toLowerCase() || undefined,
      verified: q.verified === undefined ? undefined : q.verified === "true",
      planId: q.plan || undefined,
      createdFrom: q.createdFrom,
      createdTo: q.createdTo,
      sort: q.sort,
      limit: q.limit,
      offset: q.offset,
      now: core.clock(),
    });
    return { tenants: tenants.map(toPublicTenant), total, limit: q.limit, offset: q.offset };
  });

  router.get(`${base}/:tenantId/overview`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const now = core.clock();
    const [sessions, billing, invites, collections, files, members, parent, disabledAt] = await Promise.all([
      core.db.admin.tenantSessions(app.id, tenant.id),
      tenantBilling(core, app, tenant),
      listInviteTokens(core, app, tenant.id),
      core.db.admin.recordCounts(app.id, tenant.id),
      tenantFiles(app, tenant, 50, 0),
      core.db.family.members(app.id, tenant.id),
      tenant.parentTenantId ? core.db.tenants.findById(app.id, tenant.parentTenantId) : undefined,
      core.db.admin.signInDisabledAt(tenant.id),
    ]);
    return {
      tenant: { ...toPublicTenant(tenant), locale: tenant.locale, hasPassword: tenant.passwordHash !== null, signInDisabledAt: toIso(disabledAt) },
      sessions: sessions.map((s) => ({
        id: s.id,
        createdAt: toIso(s.createdAt)!,
        expiresAt: toIso(s.expiresAt)!,
        endedAt: toIso(s.endedAt),
        endReason: s.endReason,
        active: s.endedAt === null && s.expiresAt > now,
      })),
      billing,
      invites,
      family: {
        owner: parent ? { tenantId: parent.id, email: parent.email } : null,
        members: members.map((m) => ({ tenantId: m.tenantId, email: m.email, joinedAt: toIso(m.joinedAt)! })),
      },
      collections,
      files,
    };
  });

  router.post(`${base}/:tenantId/sessions/end`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const ended = await core.db.sessions.endAllForTenant(tenant.id, core.clock(), "admin");
    await auditRequest(core, event, { appId: app.id, action: "tenant.sessions_ended", tenantId: tenant.id, details: { count: ended } });
    return { ended };
  });

  // Ends a trial now (a trial granted by mistake, or a replaced one to take back); a paid
  // subscription or a gift is untouched.
  router.delete(`${base}/:tenantId/billing/trial`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    if (!(await core.db.billing.removeSource(app.id, tenant.id, "trial"))) throw fail("not_found", "This tenant has no trial to end.");
    event.res.status = 204;
    return null;
  });

  router.get(`${base}/:tenantId/records/:collection`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const q = parseInput(RecordsQuery, getQuery(event), "query");
    return listRecords(core, asTenant(app, tenant), getRouterParam(event, "collection") ?? "", q);
  });

  router.get(`${base}/:tenantId/files`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const q = parseInput(FilesQuery, getQuery(event), "query");
    return tenantFiles(app, tenant, q.limit, q.offset);
  });
  router.get(`${base}/:tenantId/files/:fileId/preview`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    const file = await requireOwnFile(core, app, tenant.id, getRouterParam(event, "fileId") ?? "");
    if (!PREVIEWABLE.has(file.mimeType)) throw fail("unsupported_media_type", `No preview for ${file.mimeType}: only PNG, JPEG, GIF, WebP and AVIF images are shown.`);
    const raw = await core.storage.getItemRaw(file.pathname);
    if (raw === null || raw === undefined) throw fail("not_found", `The bytes of file ${file.id} are missing from storage.`);
    const bytes = raw instanceof Uint8Array ? raw : Buffer.from(raw as ArrayBuffer);
    return new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { "content-type": file.mimeType, "x-content-type-options": "nosniff", "content-security-policy": "default-src 'none'", "cache-control": "private, max-age=300" },
    });
  });
  router.delete(`${base}/:tenantId/files/:fileId`, async (event) => {
    const { app, tenant } = await tenantOf(event);
    await deleteFile(core, app, tenant.id, getRouterParam(event, "fileId") ?? "");
    await auditRequest(core, event, { appId: app.id, action: "tenant.file_deleted", tenantId: tenant.id, target: getRouterParam(event, "fileId") });
    event.res.status = 204;
    return null;
  });

  async function tenantFiles(app: AppRow, tenant: TenantRow, limit: number, offset: number) {
    const { ids, total } = await core.db.admin.tenantFileIds(app.id, tenant.id, limit, offset);
    const rows = await Promise.all(ids.map((id) => core.db.files.find(app.id, tenant.id, id)));
    return { files: rows.filter((f) => f !== undefined).map((f) => ({ ...toFileInfo(core, f), previewable: PREVIEWABLE.has(f.mimeType) })), total, limit, offset };
  }
}
