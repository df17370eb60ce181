import type { Core } from "../core.ts";
import type { AppRow } from "../db/apps.ts";
import type { JsonObject } from "../tools/merge-patch.ts";
import { createApp, deleteApp, requireAppRef, rotatePublishableKey, toPublicApp, updateApp, type PublicApp } from "../apps/service.ts";
import { createDeveloper, setDeveloperPassword, toPublicDeveloper } from "./developers.ts";

/** `backend.admin`: what the admin API and the CLI can do, as plain async functions. */
export function createAdminApi(core: Core) {
  const view = (app: AppRow): PublicApp => toPublicApp(app);
  return {
    async createApp(input: { name: string; ownerEmail?: string; settings?: JsonObject }): Promise<PublicApp> {
      const owner = input.ownerEmail ? await core.db.developers.findByEmail(input.ownerEmail.trim().toLowerCase()) : undefined;
      if (input.ownerEmail && !owner) throw new Error(`tenantd: no developer with email ${input.ownerEmail}`);
      return view(await createApp(core, { name: input.name, ownerId: owner?.id ?? null, settings: input.settings }));
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
  };
}

export type AdminApi = ReturnType<typeof createAdminApi>;
