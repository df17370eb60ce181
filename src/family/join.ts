import * as v from "valibot";
import { HTTPError } from "h3";
import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { hashToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import { EmailSchema, PasswordSchema } from "../admin/developers.ts";
import { signup } from "../auth/signup.ts";
import { startSession } from "../auth/sessions.ts";
import { toPublicTenant } from "../auth/tenant-view.ts";
import { providerState } from "../billing/effective.ts";
import { familySeatLimit, currentTenant } from "./seats.ts";
import { joinFailure, requireJoined } from "./outcomes.ts";

const token = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200));
export const ConsumeBody = v.object({ token, email: EmailSchema, password: PasswordSchema, locale: v.optional(v.pipe(v.string(), v.maxLength(35))) });
export const ReplaceBody = v.object({ token });

/**
 * The spec's consume: a result of kind `new` (the member account, signed in) or
 * `email_exists` (that person signs in and calls replace-with-family; the invite stays unused).
 */
export async function consumeFamilyInvite(core: Core, app: AppRow, input: v.InferOutput<typeof ConsumeBody>) {
  try {
    const { tenant, ...tokens } = await signup(core, app, { email: input.email, password: input.password, locale: input.locale, inviteToken: input.token }, "family");
    return { result: "new" as const, tenant: toPublicTenant(tenant), ...tokens, parentTenantId: tenant.parentTenantId };
  } catch (e) {
    if (HTTPError.isError(e) && e.body?.error === "email_exists") {
      return {
        result: "email_exists" as const,
        message: "An account with this email already exists. Sign in, then join with POST /api/v1/tenants/me/replace-with-family { token }.",
      };
    }
    throw e;
  }
}

/**
 * A signed-in tenant joins a family. Refused while the tenant pays for its own subscription
 * (it would keep being charged for a plan the family replaces): cancel it first. Answers a
 * new session whose tokens carry the parent; the tenant's other sessions stay signed in.
 */
export async function replaceWithFamily(core: Core, app: AppRow, tenantId: string, inviteToken: string) {
  const tenant = await currentTenant(core, app, tenantId);
  const now = core.clock();
  const paid = (await core.db.billing.subscriptions(app.id, tenantId)).find((s) => s.source === "billing_provider" && providerState(s, now).entitles);
  if (paid) throw fail("conflict", "You have an active paid subscription. Cancel it (POST /api/v1/billing/portal) before joining a family.");
  const hash = hashToken(inviteToken);
  const invite = await core.db.family.findInviteByHash(app.id, hash);
  if (!invite) throw joinFailure({ kind: "invalid" });
  const limit = await familySeatLimit(core, app, invite.tenantId);
  const parentTenantId = requireJoined(await core.db.family.join(app.id, hash, tenantId, limit, now));
  await core.realtime?.tenantEvent(app.id, tenantId, "family", { change: "joined", parentTenantId });
  await core.realtime?.tenantEvent(app.id, parentTenantId, "family", { change: "member_joined", memberTenantId: tenantId });
  return { ok: true, parentTenantId, ...(await startSession(core, { ...tenant, parentTenantId })) };
}
