import type { Core } from "./core.ts";
import type { AppRow } from "./db/types.ts";
import { createApp } from "./apps/service.ts";

/** Where local front-end dev servers usually run (Next/CRA, Vite): allowed only in development mode. */
export const DEVELOPMENT_ORIGINS = ["http://localhost:3000", "http://localhost:5173"];

/**
 * On an empty database, creates the default app so a first `tenantd serve` is usable at once.
 * In production it allows no browser origin: a server must not trust whatever runs on a visitor's localhost.
 */
export async function ensureDefaultApp(core: Core): Promise<AppRow | undefined> {
  // Nodes starting together on an empty PostgreSQL database take turns: one creates the app.
  if (core.db.cluster) return core.db.cluster.exclusive("bootstrap", () => createDefaultApp(core));
  return createDefaultApp(core);
}

async function createDefaultApp(core: Core): Promise<AppRow | undefined> {
  if ((await core.db.apps.count()) > 0) return undefined;
  // A developer created before the first start (tenantd developer create) owns it.
  const developers = await core.db.developers.list();
  const ownerId = developers.length === 1 ? developers[0]!.id : null;
  const corsOrigins = core.config.mode === "development" ? DEVELOPMENT_ORIGINS : [];
  return createApp(core, { name: "default", ownerId, settings: { corsOrigins } });
}
