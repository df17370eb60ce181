import * as v from "valibot";
import { getQuery, getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { parseInput } from "../http/body.ts";
import { requireDeveloper, requireOwnApp, requireTenant } from "../http/guards.ts";
import type { AuditFilter } from "../db/types.ts";
import { toAuditEntry, type AuditEntry } from "./audit.ts";

const isoTime = (name: string) =>
  v.pipe(v.string(`${name} must appear once`), v.check((s) => !Number.isNaN(Date.parse(s)), `${name} must be a date like 2026-01-31 or an ISO 8601 time`), v.transform((s) => Date.parse(s)));
const whole = (name: string, min: number, max: number) =>
  v.pipe(v.string(`${name} must appear once`), v.regex(/^\d{1,16}$/, `${name} must be a whole number`), v.transform(Number), v.minValue(min, `${name} must be at least ${min}`), v.maxValue(max, `${name} must be at most ${max}`));
const text = (name: string) => v.pipe(v.string(`${name} must appear once`), v.minLength(1, `${name} must not be empty`), v.maxLength(200, `${name} is at most 200 characters`));

export const AuditQuery = v.object({
  tenant: v.optional(text("tenant")),
  /** an action, or a prefix ending in `*` (`tenant.*`) */
  action: v.optional(text("action")),
  actor: v.optional(v.picklist(["developer", "tenant", "operator", "system"], "actor must be developer, tenant, operator or system")),
  actorId: v.optional(text("actorId")),
  from: v.optional(isoTime("from")),
  to: v.optional(isoTime("to")),
  limit: v.optional(whole("limit", 1, 500), "50"),
  /** the `nextCursor` of the previous page */
  cursor: v.optional(whole("cursor", 1, Number.MAX_SAFE_INTEGER)),
});
export type AuditQueryInput = v.InferInput<typeof AuditQuery>;

export interface AuditPage {
  entries: AuditEntry[];
  /** pass as `cursor` for the next (older) page; null on the last page */
  nextCursor: string | null;
}

/** One page of the app's trail, newest first (the admin API, `tenantd audit list`). */
export async function listAudit(core: Core, appId: string, query: Record<string, unknown>): Promise<AuditPage> {
  const q = parseInput(AuditQuery, query, "query");
  const prefix = q.action?.endsWith("*") ? q.action.slice(0, -1) : undefined;
  const filter: AuditFilter = {
    tenantId: q.tenant,
    action: prefix === undefined ? q.action : undefined,
    actionPrefix: prefix,
    actorType: q.actor,
    actorId: q.actorId,
    from: q.from,
    to: q.to,
    beforeSeq: q.cursor,
    limit: q.limit + 1,
  };
  const rows = await core.db.audit.list(appId, filter);
  const page = rows.slice(0, q.limit);
  return { entries: page.map(toAuditEntry), nextCursor: rows.length > q.limit ? String(page.at(-1)!.seq) : null };
}

export const ActivityQuery = v.object({
  limit: v.optional(whole("limit", 1, 200), "50"),
  cursor: v.optional(whole("cursor", 1, Number.MAX_SAFE_INTEGER)),
});

/** What a tenant sees of its own entries: no developer ids, hashes or request ids. */
export function toActivity(e: AuditEntry) {
  return { id: e.id, at: e.at, action: e.action, actor: e.actor.type === "tenant" ? "you" : e.actor.type, ip: e.ip, client: e.client, details: e.details };
}

export function registerAuditRoutes(router: Router, core: Core): void {
  router.get("/api/v1/admin/apps/:appId/audit", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    return listAudit(core, app.id, getQuery(event));
  });

  router.get("/api/v1/account/activity", async (event) => {
    const auth = await requireTenant(event, core);
    const q = parseInput(ActivityQuery, getQuery(event), "query");
    const page = await listAudit(core, auth.app.id, { tenant: auth.tenantId, limit: String(q.limit), ...(q.cursor && { cursor: String(q.cursor) }) });
    return { activity: page.entries.map(toActivity), nextCursor: page.nextCursor };
  });
}
