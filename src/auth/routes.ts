import * as v from "valibot";
import { getRouterParam } from "h3";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { readJson } from "../http/body.ts";
import { jsonText } from "../http/json-text.ts";
import { checkTenant, clientIp, noStore, requireApp, requireAppSecret, requireDeveloper, requireOwnApp, requireTenant, tenantRoute } from "../http/guards.ts";
import { andThen } from "../awaitable.ts";
import { enforceRateLimit } from "../http/rate-limit.ts";
import { fail } from "../errors.ts";
import { EmailSchema, PasswordSchema } from "../admin/developers.ts";
import { login, signup, SignupBody, toLocale } from "./signup.ts";
import { refreshSession, tokenPairJson } from "./sessions.ts";
import { toPublicTenant } from "./tenant-view.ts";
import { resendVerification, verifyEmail } from "./verify-email.ts";
import { requireTenantRef } from "./tenant-ref.ts";
import { requestPasswordReset, resetPassword } from "./password-reset.ts";
import { introspect, introspectionJson } from "./introspect.ts";
import { quiet, requestIdOf } from "../http/lifecycle.ts";
import { singleHeader } from "../http/request-headers.ts";
import { registerAuthPages } from "./pages.ts";
import { finishSignIn, signInResponse } from "./sign-in-finish.ts";
import { registerMfaRoutes } from "./mfa/routes.ts";
import { registerPasskeyRoutes } from "./passkeys/routes.ts";
import { registerSigningKeyRoutes } from "./signing-key-routes.ts";
import { registerEmailSignInRoutes } from "./email-code/routes.ts";
import { registerAnonymousRoutes } from "./anonymous-routes.ts";
import { asTenant, auditRequest, auditTenant } from "../audit/http.ts";
import { requireVerificationDelivery } from "../admin/email-delivery.ts";

const token = v.pipe(v.string(), v.minLength(1, "must not be empty"), v.maxLength(200));
export const LoginBody = v.object({ email: v.pipe(v.string(), v.trim(), v.toLowerCase()), password: v.pipe(v.string(), v.maxLength(256)) });
export const RefreshBody = v.object({ refreshToken: token });
export const LogoutBody = v.object({ refreshToken: v.optional(v.pipe(v.string(), v.maxLength(200))) });
export const TokenBody = v.object({ token });
export const LocaleBody = v.object({ locale: v.optional(v.pipe(v.string(), v.maxLength(35))) });
export const ResetRequestBody = v.object({ email: EmailSchema, sendEmail: v.optional(v.boolean()) });
export const ResetBody = v.object({ token, password: PasswordSchema });
export const IntrospectBody = v.object({
  include: v.optional(v.array(v.picklist(["subscription", "tenant"], 'must be "subscription" or "tenant"')), []),
});

export function registerAuthRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;

  router.post("/api/v1/auth/signup", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, SignupBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "signup", { appId: app.id, email: body.email });
    const { tenant, ...tokens } = await signup(core, app, body);
    await auditRequest(core, event, { appId: app.id, action: "tenant.signed_up", tenantId: tenant.id, actor: asTenant(tenant.id), details: { method: "password" } });
    event.res.status = 201;
    return { tenant: toPublicTenant(tenant), ...tokens };
  });

  router.post("/api/v1/auth/login", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, LoginBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "login", { appId: app.id, email: body.email });
    const tenant = await login(core, app, body.email, body.password, clientIp(event, core));
    return signInResponse(core, event, app, await finishSignIn(core, app, tenant, "password"));
  });

  // Quiet: its one line of its own, a reuse warning, is handed the request id.
  router.post(
    "/api/v1/auth/refresh",
    quiet(async (event) => {
      const app = await requireApp(event, core);
      const body = await readJson(event, RefreshBody, limit);
      noStore(event);
      await enforceRateLimit(event, core, "refresh");
      return jsonText(tokenPairJson(await refreshSession(core, app, body.refreshToken, requestIdOf(event))));
    }),
  );

  router.post("/api/v1/auth/logout", async (event) => {
    const auth = await requireTenant(event, core);
    await readJson(event, LogoutBody, limit);
    await core.db.sessions.end(auth.sessionId, core.clock(), "logout");
    await auditTenant(core, event, auth.app.id, "tenant.signed_out", auth.tenantId);
    event.res.status = 204;
    return null;
  });

  router.get(
    "/api/v1/auth/me",
    tenantRoute(core, (_event, auth) =>
      andThen(core.db.tenants.findById(auth.app.id, auth.tenantId, core.clock()), (tenant) => {
        if (!tenant) throw fail("session_ended", "This account no longer exists.");
        return { tenant: toPublicTenant(tenant) };
      }),
    ),
  );

  router.post("/api/v1/auth/verify-email", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, TokenBody, limit);
    await enforceRateLimit(event, core, "verify-email");
    const tenantId = await verifyEmail(core, app, body.token);
    await auditTenant(core, event, app.id, "tenant.email_verified", tenantId);
    return { ok: true };
  });

  router.post("/api/v1/auth/resend-verification", async (event) => {
    const auth = await requireTenant(event, core);
    const body = await readJson(event, LocaleBody, limit);
    const tenant = await core.db.tenants.findById(auth.app.id, auth.tenantId);
    if (!tenant) throw fail("session_ended", "This account no longer exists.");
    // Each resend is an email: counted like the other flows, so a leaked token cannot flood an inbox.
    await enforceRateLimit(event, core, "resend-verification", { appId: auth.app.id, email: tenant.email });
    await resendVerification(core, auth.app, tenant, body.locale);
    return { ok: true };
  });

  router.post("/api/v1/auth/request-password-reset", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, ResetRequestBody, limit);
    noStore(event);
    await enforceRateLimit(event, core, "request-password-reset", { appId: app.id, email: body.email });
    const sendEmail = body.sendEmail ?? app.settings.email.sendEmail;
    // The publishable key is public: a reset token in the reply would hand any account to
    // whoever holds it. The token goes only to the app's server, proven by its secret key.
    if (!sendEmail) {
      const why = body.sendEmail === false ? "sendEmail: false" : "the app setting email.sendEmail is false: the app delivers its own email";
      requireAppSecret(event, app, `A reset token in the reply (${why})`);
    }
    const result = await requestPasswordReset(core, app, {
      email: body.email,
      sendEmail,
      // The first language the browser prefers; a decoy answer needs a plausible locale.
      fallbackLocale: toLocale(event.req.headers.get("accept-language")?.split(/[,;]/)[0]),
    });
    if (result) return result;
    event.res.status = 204;
    return null;
  });

  router.post("/api/v1/auth/reset-password", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, ResetBody, limit);
    await enforceRateLimit(event, core, "reset-password");
    const tenantId = await resetPassword(core, app, body.token, body.password);
    await auditTenant(core, event, app.id, "tenant.password_reset", tenantId);
    return { ok: true };
  });

  router.post(
    "/api/v1/auth/introspect",
    quiet((event) =>
      andThen(requireApp(event, core), (app) =>
        readJson(event, IntrospectBody, limit, (body) => {
          noStore(event);
          // The key names the app; the bearer needs no x-service-app beside it.
          const checked = singleHeader(event, "authorization") !== null ? checkTenant(event, core, app) : undefined;
          const answer = andThen(checked, (c) => introspect(core, app, c && !("error" in c) ? c : undefined, body.include));
          return body.include.length ? answer : andThen(answer, (x) => jsonText(introspectionJson(x)));
        }),
      ),
    ),
  );

  // The developer's dashboard action (also `tenantd tenant resend-verification`).
  router.post("/api/v1/admin/apps/:appId/tenants/:tenantId/resend-verification", async (event) => {
    const { developer } = await requireDeveloper(event, core);
    const app = await requireOwnApp(core, developer, getRouterParam(event, "appId"));
    const tenant = await requireTenantRef(core, app, decodeURIComponent(getRouterParam(event, "tenantId") ?? ""));
    await requireVerificationDelivery(core, app);
    const { sentBy, expiresAt } = await resendVerification(core, app, tenant);
    await auditRequest(core, event, { appId: app.id, action: "tenant.verification_resent", tenantId: tenant.id });
    return { ok: true, sentBy, expiresAt: new Date(expiresAt).toISOString() };
  });

  registerAuthPages(router, core);
  registerMfaRoutes(router, core);
  registerPasskeyRoutes(router, core);
  registerSigningKeyRoutes(router, core);
  registerEmailSignInRoutes(router, core);
  registerAnonymousRoutes(router, core);
}
