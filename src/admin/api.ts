import type { Core } from "../core.ts";
import type { AppRow } from "../db/types.ts";
import type { JsonObject } from "../tools/merge-patch.ts";
import { createApp, deleteApp, requireAppRef, rotatePublishableKey, rotateSecretKey, setAppOwner, toPublicApp, updateApp, type PublicApp } from "../apps/service.ts";
import { createDeveloper, setDeveloperPassword, toPublicDeveloper } from "./developers.ts";
import { getWebhookConfig, removeWebhookConfig, rotateWebhookSecret, setWebhookUrl } from "../webhooks/config.ts";
import { getDelivery, listDeliveries } from "../webhooks/deliveries.ts";
import { deleteTenant } from "../account/delete.ts";
import { fail } from "../errors.ts";
import { requireTenantRef } from "../auth/tenant-ref.ts";
import { listSigningKeys, rotateSigningKey } from "../auth/signing-key-routes.ts";

/** `backend.admin`: what the admin API and the CLI can do, as plain async functions. */
export function createAdminApi(core: Core) {
  const view = (app: AppRow): PublicApp => toPublicApp(app);
  return {
    /**
     * Creates an app. Its owner is `ownerEmail`'s developer, or else the only developer when
     * there is exactly one (so it shows in their admin API), or else nobody until set.
     */
    async createApp(input: { name: string; ownerEmail?: string; settings?: JsonObject }): Promise<PublicApp> {
      const developers = await core.db.developers.list();
      const owner = input.ownerEmail ? developers.find((d) => d.email === input.ownerEmail!.trim().toLowerCase()) : developers.length === 1 ? developers[0] : undefined;
      if (input.ownerEmail && !owner) throw fail("not_found", `No developer with email ${input.ownerEmail}. Create one with: tenantd developer create --email ${input.ownerEmail}`);
      return view(await createApp(core, { name: input.name, ownerId: owner?.id ?? null, settings: input.settings }));
    },
    async setAppOwner(ref: string, ownerEmail: string): Promise<PublicApp> {
      return view(await setAppOwner(core, await requireAppRef(core, ref), ownerEmail));
    },
    async listApps(): Promise<PublicApp[]> {
      return (await core.db.apps.list()).map(view);
    },
    async getApp(ref: string): Promise<PublicApp> {
      return view(await requireAppRef(core, ref));
    },
    async updateApp(ref: string, patch: { name?: string; settings?: JsonObject }): Promise<PublicApp> {
      return view(await updateApp(core, await requireAppRef(core, ref), patch));
    },
    async rotateAppKey(ref: string): Promise<PublicApp> {
      return view(await rotatePublishableKey(core, await requireAppRef(core, ref)));
    },
    /** A new server-side secret key for the app, returned once; the previous one stops working. */
    async rotateAppSecretKey(ref: string): Promise<string> {
      return rotateSecretKey(core, await requireAppRef(core, ref));
    },
    async deleteApp(ref: string): Promise<void> {
      await deleteApp(core, await requireAppRef(core, ref));
    },
    async createDeveloper(input: { email: string; password: string }) {
      const { developer, adoptedApps } = await createDeveloper(core, input);
      return { developer: toPublicDeveloper(developer), adoptedApps };
    },
    async setDeveloperPassword(email: string, password: string): Promise<void> {
      await setDeveloperPassword(core, email, password);
    },
    /** Sets the app's webhook URL; `secret` is the new signing secret on the first set, else null. */
    async setWebhookUrl(ref: string, url: string) {
      return setWebhookUrl(core, await requireAppRef(core, ref), url);
    },
    async rotateWebhookSecret(ref: string) {
      return rotateWebhookSecret(core, await requireAppRef(core, ref));
    },
    async getWebhookConfig(ref: string) {
      return getWebhookConfig(core, await requireAppRef(core, ref));
    },
    async removeWebhookConfig(ref: string): Promise<void> {
      await removeWebhookConfig(core, await requireAppRef(core, ref));
    },
    async listWebhookDeliveries(ref: string, page: { limit?: number; offset?: number } = {}) {
      return listDeliveries(core, await requireAppRef(core, ref), { limit: page.limit ?? 50, offset: page.offset ?? 0 });
    },
    /** One delivery with the exact body it sent. */
    async getWebhookDelivery(ref: string, id: string) {
      return getDelivery(core, await requireAppRef(core, ref), id);
    },
    /** Deletes a tenant (by id or email) as the app owner: fires `tenant.deleted` with reason `admin_delete`. */
    async deleteTenant(ref: string, tenantRef: string): Promise<{ tenantId: string; email: string }> {
      const app = await requireAppRef(core, ref);
      const tenant = await requireTenantRef(core, app, tenantRef);
      await deleteTenant(core, app, tenant.id, "admin_delete");
      return { tenantId: tenant.id, email: tenant.email };
    },
    /** A new access-token signing key; the previous one verifies until its tokens have expired. */
    async rotateSigningKey(ref: string) {
      return rotateSigningKey(core, await requireAppRef(core, ref));
    },
    async listSigningKeys(ref: string) {
      return listSigningKeys(core, await requireAppRef(core, ref));
    },
  };
}

export type AdminApi = ReturnType<typeof createAdminApi>;
