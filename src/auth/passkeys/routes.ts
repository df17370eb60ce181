import * as v from "valibot";
import { getRouterParam } from "h3";
import type { Core } from "../../core.ts";
import type { Router } from "../../http/router.ts";
import { readJson } from "../../http/body.ts";
import { noStore, requireApp, requireTenant } from "../../http/guards.ts";
import { enforceRateLimit } from "../../http/rate-limit.ts";
import { fail } from "../../errors.ts";
import { requireRecentAuth } from "../step-up.ts";
import { signInResponse } from "../sign-in-finish.ts";
import { authenticationOptions, passkeySignIn, registerPasskey, registrationOptions, removePasskey, renamePasskey, toPublicPasskey } from "./service.ts";

const name = v.pipe(v.string(), v.trim(), v.minLength(1, "must not be empty"), v.maxLength(100));
const credential = v.looseObject({});
export const PasskeyRegisterBody = v.object({ credential, name: v.optional(name) });
export const PasskeyRenameBody = v.object({ name });
export const PasskeyOptionsBody = v.object({
  purpose: v.optional(v.picklist(["sign_in", "reauthenticate"], 'must be "sign_in" or "reauthenticate"'), "sign_in"),
  email: v.optional(v.pipe(v.string(), v.trim(), v.toLowerCase(), v.maxLength(320))),
  mfaTicket: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(200))),
});
export const PasskeySignInBody = v.object({ credential });
const EmptyBody = v.object({});

export function registerPasskeyRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;

  router.post("/api/v1/auth/passkeys/register/options", async (event) => {
    const auth = await requireTenant(event, core);
    await readJson(event, EmptyBody, limit);
    noStore(event);
    const tenant = await core.db.tenants.findById(auth.app.id, auth.tenantId);
    if (!tenant) throw fail("session_ended", "This account no longer exists.");
    return registrationOptions(core, auth.app, tenant);
  });

  router.post("/api/v1/auth/passkeys/register", async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, PasskeyRegisterBody, limit);
    await enforceRateLimit(event, core, "passkey");
    const passkey = await registerPasskey(core, auth.app, auth.tenantId, body.credential, body.name);
    event.res.status = 201;
    return { passkey: toPublicPasskey(passkey) };
  });

  router.get("/api/v1/auth/passkeys", async (event) => {
    const auth = await requireTenant(event, core);
    return { passkeys: (await core.db.mfa.passkeys(auth.app.id, auth.tenantId)).map(toPublicPasskey) };
  });

  router.patch("/api/v1/auth/passkeys/:id", async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, PasskeyRenameBody, limit);
    return { passkey: toPublicPasskey(await renamePasskey(core, auth.app, auth.tenantId, getRouterParam(event, "id") ?? "", body.name)) };
  });

  router.delete("/api/v1/auth/passkeys/:id", async (event) => {
    const auth = await requireTenant(event, core);
    await requireRecentAuth(core, auth, "Removing a passkey");
    await removePasskey(core, auth.app, auth.tenantId, getRouterParam(event, "id") ?? "");
    event.res.status = 204;
    return null;
  });

  // Sign-in options with the app key; re-authentication options with the tenant's bearer alone.
  router.post("/api/v1/auth/passkeys/options", async (event) => {
    const body = await readJson(event, PasskeyOptionsBody, limit);
    noStore(event);
    if (body.purpose === "reauthenticate") {
      const auth = await requireTenant(event, core);
      return authenticationOptions(core, auth.app, { purpose: "reauthenticate", tenantId: auth.tenantId });
    }
    const app = await requireApp(event, core);
    await enforceRateLimit(event, core, "passkey", body.email ? { appId: app.id, email: body.email } : {});
    return authenticationOptions(core, app, { purpose: "sign_in", email: body.email, mfaTicket: body.mfaTicket });
  });

  router.post("/api/v1/auth/passkeys/sign-in", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, PasskeySignInBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "passkey");
    return signInResponse(core, event, app, await passkeySignIn(core, app, body.credential));
  });
}
