import type { Core } from "./core.ts";
import type { AppRow } from "./db/apps.ts";
import { createApp } from "./apps/service.ts";

/** On an empty database, creates the default app so a first `tenantd serve` is usable at once. */
export async function ensureDefaultApp(core: Core): Promise<AppRow | undefined> {
  if ((await core.db.apps.count()) > 0) return undefined;
  return createApp(core, { name: "default", settings: { corsOrigins: ["http://localhost:3000", "http://localhost:5173"] } });
}
