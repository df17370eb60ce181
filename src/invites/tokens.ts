import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { effectiveEntitlements } from "../billing/effective.ts";
import { entitlementLimit, newInvite, toPublicInvite, type CreateInviteInput } from "./shape.ts";

/** `limit` null is unlimited; `used` counts used tokens and unused ones that have not expired. */
export interface InviteQuota {
  limit: number | null;
  used: number;
  remaining: number | null;
}

/** The entitlement `invite_tokens` of the tenant's effective plan, else the app's default quota. */
async function quotaLimit(core: Core, app: AppRow, tenantId: string): Promise<number | null> {
  const entitlements = await effectiveEntitlements(core, app, tenantId);
  return entitlementLimit(entitlements.invite_tokens, app.settings.invites.defaultQuota);
}

async function quotaOf(core: Core, app: AppRow, tenantId: string, limit: number | null): Promise<InviteQuota> {
  const used = await core.db.invites.spent(app.id, tenantId, core.clock());
  return { limit, used, remaining: limit === null ? null : Math.max(0, limit - used) };
}

export async function inviteQuota(core: Core, app: AppRow, tenantId: string): Promise<InviteQuota> {
  return quotaOf(core, app, tenantId, await quotaLimit(core, app, tenantId));
}

export async function createInviteToken(core: Core, app: AppRow, tenantId: string, input: CreateInviteInput) {
  const limit = await quotaLimit(core, app, tenantId);
  const now = core.clock();
  const { row, token } = newInvite("invite", app.id, tenantId, input, now);
  if (!(await core.db.invites.create(row, limit))) {
    throw fail("limit_reached", `All ${limit} of your invite tokens are in use. Delete an unused one, or wait for one to expire.`);
  }
  return { token: { ...toPublicInvite(row, now), token }, quota: await quotaOf(core, app, tenantId, limit) };
}

export async function listInviteTokens(core: Core, app: AppRow, tenantId: string) {
  const now = core.clock();
  const rows = await core.db.invites.list(app.id, tenantId);
  return { tokens: rows.map((r) => toPublicInvite(r, now)), quota: await inviteQuota(core, app, tenantId) };
}

export async function deleteInviteToken(core: Core, app: AppRow, tenantId: string, id: string) {
  const outcome = await core.db.invites.remove(app.id, tenantId, id);
  if (outcome === "not_found") throw fail("not_found", `No invite token ${id} among yours.`);
  if (outcome === "used") throw fail("conflict", "This invite token was already used: it stays as the record of who joined, and it keeps its place in your quota.");
  return { quota: await inviteQuota(core, app, tenantId) };
}
