import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import { fail } from "../errors.ts";
import { newInvite, toPublicInvite, type CreateInviteInput } from "../invites/shape.ts";
import { requireOwner, seatsOf } from "./seats.ts";

/** A new family invite; members plus pending invites never exceed the owner's seats. */
export async function createFamilyInvite(core: Core, app: AppRow, ownerId: string, input: CreateInviteInput) {
  const { limit } = await requireOwner(core, app, ownerId);
  const now = core.clock();
  const { row, token } = newInvite("family", app.id, ownerId, input, now);
  if (!(await core.db.family.createInvite(row, limit))) {
    throw fail("seats_full", `All ${limit} family seats are taken by members or pending invites. Revoke an invite or remove a member first.`);
  }
  await core.realtime?.tenantEvent(app.id, ownerId, "invites", { change: "created", inviteId: row.id });
  return { invite: { ...toPublicInvite(row, now), token }, seats: await seatsOf(core, app, ownerId, limit) };
}

export async function listFamilyInvites(core: Core, app: AppRow, ownerId: string) {
  const { seats } = await requireOwner(core, app, ownerId);
  const now = core.clock();
  return { invites: (await core.db.family.listInvites(app.id, ownerId)).map((r) => toPublicInvite(r, now)), seats };
}

export async function revokeFamilyInvite(core: Core, app: AppRow, ownerId: string, id: string) {
  const { limit } = await requireOwner(core, app, ownerId);
  const outcome = await core.db.family.revokeInvite(app.id, ownerId, id);
  if (outcome === "not_found") throw fail("not_found", `No family invite ${id} among yours.`);
  if (outcome === "used") throw fail("conflict", "This invite was already used. To end that membership, remove the member (POST /api/v1/tenants/me/family/remove-member).");
  await core.realtime?.tenantEvent(app.id, ownerId, "invites", { change: "revoked", inviteId: id });
  return { ok: true, revokedInviteId: id, seats: await seatsOf(core, app, ownerId, limit) };
}
