import type { Core } from "../../core.ts";
import type { Router } from "../../http/router.ts";
import { readJson } from "../../http/body.ts";
import { clientIp, noStore, requireApp } from "../../http/guards.ts";
import { enforceRateLimit } from "../../http/rate-limit.ts";
import { signInResponse } from "../sign-in-finish.ts";
import { EMAIL_SIGN_IN_TTL_MS, EmailSignInBody, EmailSignInVerifyBody, requestEmailSignIn, verifyEmailSignIn } from "./sign-in.ts";

export function registerEmailSignInRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;

  router.post("/api/v1/auth/email-sign-in", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, EmailSignInBody, limit);
    noStore(event);
    // Each request is an email: counted per IP and per address, like a password reset.
    await enforceRateLimit(event, core, "email-sign-in", { appId: app.id, email: body.email });
    await requestEmailSignIn(core, app, body);
    event.res.status = 202;
    return { ok: true, expiresIn: EMAIL_SIGN_IN_TTL_MS / 1000 };
  });

  router.post("/api/v1/auth/email-sign-in/verify", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, EmailSignInVerifyBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "email-sign-in-verify", { appId: app.id, ...("email" in body && { email: body.email }) });
    return signInResponse(core, event, app, await verifyEmailSignIn(core, app, body, clientIp(event, core)));
  });
}
