import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { requireDeveloper, requireOwnApp } from "../http/guards.ts";
import { setReplyHeader } from "../http/reply-headers.ts";
import { fail } from "../errors.ts";
import { toIso } from "../clock.ts";
import type { AppRow } from "../db/types.ts";
import { RETIRED_KEY_OVERLAP_MS } from "./signing-keys.ts";

/** The app's keys for the developer: none of them private. */
export async function listSigningKeys(core: Core, app: AppRow) {
  await core.signingKeys.signer(app.id);
  const now = core.clock();
  return (await core.db.signingKeys.listForApp(app.id)).map((k) => {
    const until = k.retiredAt === null ? null : k.retiredAt + RETIRED_KEY_OVERLAP_MS;
    return { kid: k.kid, current: k.retiredAt === null, createdAt: toIso(k.createdAt), retiredAt: k.retiredAt === null ? null : toIso(k.retiredAt), verifiesUntil: until === null ? null : toIso(until), published: until === null || until > now };
  });
}

/** Rotates the app's signing key: the answer says until when the previous key still verifies. */
export async function rotateSigningKey(core: Core, app: AppRow) {
  const { kid, previousKid } = await core.signingKeys.rotate(app.id);
  return { kid, previousKid, previousVerifiesUntil: previousKid === null ? null : toIso(core.clock() + RETIRED_KEY_OVERLAP_MS) };
}

export function registerSigningKeyRoutes(router: Router, core: Core): void {
  // Public, like any JWKS: other services fetch it to verify the app's access tokens offline.
  router.get("/api/v1/apps/:appId/.well-known/jwks.json", async (event) => {
    const appId = getRouterParam(event, "appId") ?? "";
    const app = await core.db.apps.findById(appId);
    if (!app) throw fail("not_found", `No app ${appId}: the JWKS path takes the app id (app_…).`);
    // Short: a verifier meeting an unknown kid fetches again anyway (jose does), and a
    // rotation's new key should reach the others within the old key's overlap.
    setReplyHeader(event, "cache-control", "public, max-age=300");
    setReplyHeader(event, "access-control-allow-origin", "*");
    return core.signingKeys.jwks(app.id);
  });

  const ownApp = async (event: Parameters<Parameters<Router["get"]>[1]>[0]) => {
    const { developer } = await requireDeveloper(event, core);
    return requireOwnApp(core, developer, getRouterParam(event, "appId"));
  };
  router.get("/api/v1/admin/apps/:appId/signing-keys", async (event) => ({ keys: await listSigningKeys(core, await ownApp(event)) }));
  router.post("/api/v1/admin/apps/:appId/signing-keys/rotate", async (event) => rotateSigningKey(core, await ownApp(event)));
}
