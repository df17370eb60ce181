import type { Core } from "./core.ts";
import type { AppRow } from "./db/apps.ts";
import { createApp } from "./apps/service.ts";

/** On an empty database, creates the default app so a first `tenantd serve` is usable at once. */
export async function ensureDefaultApp(core: Core): Promise<AppRow | undefined> {
  if ((await core.db.apps.count()) > 0) return undefined;
  // A developer created before the first start (tenantd developer create) owns it.
  const developers = await core.db.developers.list();
  const ownerId = developers.length === 1 ? developers[0]!.id : null;
  return createApp(core, { name: "default", ownerId, settings: { corsOrigins: ["http://localhost:3000", "http://localhost:5173"] } });
}
