import * as v from "valibot";
import type { Core } from "../core.ts";
import type { Router } from "../http/router.ts";
import { readJson } from "../http/body.ts";
import { requireApp, requireTenant } from "../http/guards.ts";
import { fail } from "../errors.ts";
import { login, signup, SignupBody } from "./signup.ts";
import { refreshSession, startSession } from "./sessions.ts";
import { toPublicTenant } from "./tenant-view.ts";

const LoginBody = v.object({ email: v.pipe(v.string(), v.trim(), v.toLowerCase()), password: v.pipe(v.string(), v.maxLength(256)) });
const RefreshBody = v.object({ refreshToken: v.pipe(v.string(), v.minLength(1), v.maxLength(200)) });
const LogoutBody = v.object({ refreshToken: v.optional(v.pipe(v.string(), v.maxLength(200))) });

export function registerAuthRoutes(router: Router, core: Core): void {
  const limit = core.config.maxJsonBytes;

  router.post("/api/v1/auth/signup", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, SignupBody, limit);
    const { tenant, ...tokens } = await signup(core, app, body);
    event.res.status = 201;
    return { tenant: toPublicTenant(tenant), ...tokens };
  });

  router.post("/api/v1/auth/login", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, LoginBody, limit);
    const tenant = await login(core, app, body.email, body.password);
    return { tenant: toPublicTenant(tenant), ...(await startSession(core, tenant)) };
  });

  router.post("/api/v1/auth/refresh", async (event) => {
    const app = await requireApp(event, core);
    const body = await readJson(event, RefreshBody, limit);
    return refreshSession(core, app, body.refreshToken);
  });

  router.post("/api/v1/auth/logout", async (event) => {
    const auth = await requireTenant(event, core);
    await readJson(event, LogoutBody, limit);
    await core.db.sessions.end(auth.sessionId, core.clock(), "logout");
    event.res.status = 204;
    return null;
  });

  router.get("/api/v1/auth/me", async (event) => {
    const auth = await requireTenant(event, core);
    const tenant = await core.db.tenants.findById(auth.app.id, auth.tenantId);
    if (!tenant) throw fail("session_ended", "This account no longer exists.");
    return { tenant: toPublicTenant(tenant) };
  });
}
