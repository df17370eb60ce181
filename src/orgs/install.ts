import type { Core } from "../core.ts";
import { hashToken } from "../crypto/random.ts";
import { orgChanged } from "./events.ts";
import { orgJoined } from "./invites.ts";
import { dataOwnerOf } from "./records.ts";
import { sweepTenantBlobs } from "../files/service.ts";

/**
 * An account deletion must not leave organizations without an owner: each one the tenant
 * alone owns passes to its earliest admin (else earliest member), and one it was alone in is
 * deleted. Runs on "tenant.deleting", after billing's handler, which may still refuse the deletion.
 */
export function installOrgs(core: Core): void {
  // A sign-up with an organization invite joined inside the sign-up's transaction: announced here.
  core.hooks.on(
    "tenant.created",
    async ({ app, tenant, inviteToken }) => {
      if (!inviteToken?.startsWith("org_")) return;
      const invite = await core.db.orgs.findInviteByHash(app.id, hashToken(inviteToken));
      const member = invite && (await core.db.orgs.asMember(app.id, invite.orgId, tenant.id));
      if (member) await orgJoined(core, app, { tenantId: tenant.id }, tenant.email, { orgId: member.id, role: member.role }, "signup");
    },
    { internal: true },
  );
  core.hooks.on(
    "tenant.deleting",
    async ({ app, tenantId }) => {
      for (const { orgId, newOwnerId } of await core.db.orgs.handOver(app.id, tenantId)) {
        const actor = { tenantId: null };
        if (newOwnerId === null) {
          // Its records and file rows went with it (cascade); the blobs live outside the store.
          await sweepTenantBlobs(core, app.id, dataOwnerOf(orgId));
          await orgChanged(core, app, actor, "org.deleted", orgId, { reason: "last_member_deleted" });
        } else {
          const heir = await core.db.tenants.findById(app.id, newOwnerId);
          await orgChanged(core, app, actor, "org.ownership_transferred", orgId, { from: tenantId, to: newOwnerId, reason: "owner_deleted" }, { tenantId: newOwnerId, email: heir?.email ?? null });
        }
      }
    },
    { internal: true },
  );
}
