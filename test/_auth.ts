import { expect } from "vitest";
import { expectError, type TestBackend, type TestTenant } from "./_helpers.ts";

export const PASSWORD = "correct horse battery";

export const refresh = (t: TestBackend, refreshToken: string, key = t.app.publishableKey) =>
  t.request("POST", "/api/v1/auth/refresh", { key, body: { refreshToken } });

/** Every bearer endpoint of the auth area, with a valid body. */
export const BEARER_ENDPOINTS = [
  { method: "GET", path: "/api/v1/auth/me", body: undefined },
  { method: "POST", path: "/api/v1/auth/logout", body: {} },
  { method: "POST", path: "/api/v1/auth/resend-verification", body: {} },
] as const;

/** The session is over: every bearer endpoint says so, introspection is inactive, refresh is refused. */
export async function expectSessionEnded(t: TestBackend, tenant: TestTenant) {
  for (const e of BEARER_ENDPOINTS) expectError(await t.request(e.method, e.path, { bearer: tenant.bearer, body: e.body }), 401, "session_ended");
  const intro = await t.request("POST", "/api/v1/auth/introspect", { key: t.app.publishableKey, bearer: tenant.bearer, body: {} });
  expect(intro.body.active).toBe(false);
  expectError(await refresh(t, tenant.refreshToken), 401, "session_ended");
}

