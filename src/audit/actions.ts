import type { Core } from "../core.ts";
import { audit, OPERATOR } from "./audit.ts";
import type { JsonObject } from "../tools/merge-patch.ts";

/**
 * What an app update changed, as the trail keeps it: the new name and which settings were
 * touched, never their values (a Stripe key or OAuth secret may be among them).
 */
export function appChanges(patch: { name?: string; settings?: JsonObject }): Record<string, unknown> {
  return {
    ...(patch.name !== undefined && { name: patch.name }),
    ...(patch.settings && { settings: settingPaths(patch.settings) }),
  };
}

/** The dotted paths a settings patch sets, two levels deep (`billing.trial`, `oauth.providers`). */
function settingPaths(patch: JsonObject): string[] {
  const paths: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length > 0) {
      for (const inner of Object.keys(value)) paths.push(`${key}.${inner}`);
    } else paths.push(key);
  }
  return paths.slice(0, 50);
}

/** An operator's action on the whole store (a backup): one entry in every app's trail, since each app has a chain of its own. */
export async function auditEveryApp(core: Core, action: string, details: Record<string, unknown>): Promise<void> {
  for (const app of await core.db.apps.list()) await audit(core, { appId: app.id, action, actor: OPERATOR, details });
}
