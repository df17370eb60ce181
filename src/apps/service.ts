import * as v from "valibot";
import { hashToken, newId, newToken } from "../crypto/random.ts";
import { fail } from "../errors.ts";
import type { AppRow } from "../db/types.ts";
import type { Core } from "../core.ts";
import { mergePatch, nestsDeeperThan, type JsonObject } from "../tools/merge-patch.ts";
import { toIso } from "../clock.ts";
import { issueMessage } from "../tools/issue-message.ts";
import { AppSettingsSchema, dropRedactedSecrets, redactSettings, sealedInputPath, sealSettings, type AppSettings } from "./settings.ts";

export const AppNameSchema = v.pipe(v.string(), v.trim(), v.minLength(1, "name must not be empty"), v.maxLength(100, "name is at most 100 characters"));

export interface PublicApp {
  id: string;
  name: string;
  publishableKey: string;
  ownerId: string | null;
  /** whether a server-side secret key was issued (the key itself is shown once) */
  hasSecretKey: boolean;
  settings: JsonObject;
  createdAt: string;
  updatedAt: string;
}

/** The developer's view of an app: secrets redacted. */
export function toPublicApp(app: AppRow): PublicApp {
  return {
    id: app.id,
    name: app.name,
    publishableKey: app.publishableKey,
    ownerId: app.ownerId,
    hasSecretKey: app.secretKeyHash !== null,
    settings: redactSettings(app.settings as JsonObject),
    createdAt: toIso(app.createdAt)!,
    updatedAt: toIso(app.updatedAt)!,
  };
}

function validateSettings(raw: unknown): AppSettings {
  const parsed = v.safeParse(AppSettingsSchema, raw);
  if (!parsed.success) {
    throw fail("invalid_request", issueMessage(parsed.issues[0], "settings"));
  }
  return parsed.output;
}

/** Secrets are given in clear (they are sealed here); a sealed value is another row's. */
function refuseSealedInput(core: Core, input: unknown): void {
  const path = sealedInputPath(input, core.secrets);
  if (path) throw fail("invalid_request", `${path}: give the secret itself (or "[encrypted]" to keep the stored one), not an encrypted value copied from elsewhere.`);
}

export async function createApp(core: Core, input: { name: string; ownerId?: string | null; settings?: unknown }): Promise<AppRow> {
  const now = core.clock();
  refuseSealedInput(core, input.settings);
  const id = newId("app");
  const settings = sealSettings(validateSettings(input.settings ?? {}) as JsonObject, core.secrets, id) as AppSettings;
  const name = v.parse(AppNameSchema, input.name);
  await refuseTakenName(core, name, input.ownerId ?? null);
  const app: AppRow = {
    id,
    name,
    publishableKey: `pk_${newToken().slice(0, 32)}`,
    secretKeyHash: null,
    ownerId: input.ownerId ?? null,
    settings,
    createdAt: now,
    updatedAt: now,
  };
  await core.db.apps.insert(app);
  await core.hooks.emit("app.settingsChanged", { app });
  return app;
}

/**
 * A merge patch deletes the keys it sets to null, but a quota set to null means "no cap"
 * (docs/data.md): deleted, the default cap would come back. Those nulls are kept.
 */
function keepNoCap(merged: JsonObject, patch: JsonObject): JsonObject {
  const quotas = patch.quotas;
  if (!quotas || typeof quotas !== "object" || Array.isArray(quotas)) return merged;
  const nulls = Object.entries(quotas).filter(([, value]) => value === null);
  if (nulls.length === 0) return merged;
  const kept = { ...((merged.quotas as JsonObject | undefined) ?? {}) };
  for (const [key] of nulls) kept[key] = null;
  return { ...merged, quotas: kept };
}

/** Applies a JSON merge patch to the app's name and settings; the result is validated whole. */
export async function updateApp(core: Core, app: AppRow, patch: { name?: string; settings?: JsonObject }): Promise<AppRow> {
  // Settings are a few levels deep; refusing deeper input first keeps the merge's walk bounded.
  if (patch.settings && nestsDeeperThan(patch.settings, 16)) throw fail("invalid_request", "settings: nested too deeply (at most 16 levels).");
  if (patch.settings) refuseSealedInput(core, dropRedactedSecrets(patch.settings));
  const merged = patch.settings ? keepNoCap(mergePatch(app.settings, dropRedactedSecrets(patch.settings)) as JsonObject, patch.settings) : app.settings;
  const settings = sealSettings(validateSettings(merged) as JsonObject, core.secrets, app.id) as AppSettings;
  const name = patch.name === undefined ? app.name : v.parse(AppNameSchema, patch.name);
  if (name !== app.name) await refuseTakenName(core, name, app.ownerId, app.id);
  const next: AppRow = {
    ...app,
    name,
    settings,
    updatedAt: core.clock(),
  };
  await core.db.apps.update(next);
  await core.hooks.emit("app.settingsChanged", { app: next });
  return next;
}

/** A new publishable key; the old one stops working at once. */
export async function rotatePublishableKey(core: Core, app: AppRow): Promise<AppRow> {
  const next = { ...app, publishableKey: `pk_${newToken().slice(0, 32)}`, updatedAt: core.clock() };
  await core.db.apps.update(next);
  return next;
}

/**
 * Issues the app's server-side secret key (`x-service-secret`), replacing any earlier one at
 * once. Only its hash is kept: the key is returned this one time.
 */
export async function rotateSecretKey(core: Core, app: AppRow): Promise<string> {
  const secretKey = newToken("sk");
  await core.db.apps.setSecretKeyHash(app.id, hashToken(secretKey), core.clock());
  return secretKey;
}

export async function deleteApp(core: Core, app: AppRow): Promise<void> {
  await core.hooks.emit("app.deleting", { app });
  await core.db.apps.remove(app.id);
}

/** Finds an app by id or, for the CLI's convenience, by exact name. */
export async function requireAppRef(core: Core, ref: string): Promise<AppRow> {
  const byId = await core.db.apps.findById(ref);
  if (byId) return byId;
  const named = (await core.db.apps.list()).filter((a) => a.name === ref);
  if (named.length > 1) throw fail("conflict", `${named.length} apps are named "${ref}": use the app id instead (${named.map((a) => a.id).join(", ")}).`);
  if (!named[0]) throw fail("not_found", `No app with id or name "${ref}". List them with: tenantd app list`);
  return named[0];
}

/** Sets the developer who owns the app (who sees it in the admin API). */
export async function setAppOwner(core: Core, app: AppRow, ownerEmail: string): Promise<AppRow> {
  const owner = await core.db.developers.findByEmail(ownerEmail.trim().toLowerCase());
  if (!owner) throw fail("not_found", `No developer with email ${ownerEmail}. Create one with: tenantd developer create --email ${ownerEmail}`);
  if (owner.id !== app.ownerId) await refuseTakenName(core, app.name, owner.id, app.id);
  await core.db.apps.setOwner(app.id, owner.id);
  return { ...app, ownerId: owner.id };
}

/**
 * The CLI (`--app <name>`) and the dashboard name apps by name: two apps of one developer
 * (or two without an owner) under one name could only be told apart by id.
 */
async function refuseTakenName(core: Core, name: string, ownerId: string | null, self?: string): Promise<void> {
  const taken = (await core.db.apps.list(ownerId ?? undefined)).find((a) => a.name === name && a.ownerId === ownerId && a.id !== self);
  if (taken) throw fail("conflict", `An app named "${name}" already exists (${taken.id})${ownerId ? " among this developer's apps" : ""}: choose another name.`);
}
