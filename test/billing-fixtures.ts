import { expect } from "vitest";
import { developerSession, signupTenant, startBackend, type TestBackend, type TestTenant } from "./_helpers.ts";
import type { TenantBackendConfig } from "../src/index.ts";

export const DAY = 24 * 60 * 60 * 1000;

/** A backend whose default app belongs to a signed-in developer, with billing helpers. */
export async function billingBackend(config: TenantBackendConfig = {}) {
  const t = await startBackend(config);
  // Checkout and portal return URLs must be on one of the app's origins.
  await t.backend.admin.updateApp(t.app.id, { settings: { corsOrigins: ["https://app.example.com"] } });
  const devEmail = `billing-dev-${Math.random().toString(36).slice(2, 8)}@example.com`;
  let dev = await developerSession(t, devEmail, "developer password");
  let devIssued = t.clock();
  const devToken = async () => {
    if (t.clock() - devIssued > 10 * 60 * 1000) {
      const res = await t.request("POST", "/api/v1/developer/login", { body: { email: devEmail, password: "developer password" } });
      expect(res.status, res.text).toBe(200);
      dev = res.body.token;
      devIssued = t.clock();
    }
    return dev;
  };
  // Tests move the clock by days; a tenant signs in again once its 15-minute token is stale.
  const issued = new WeakMap<TestTenant, number>();
  const bearer = async (tenant: TestTenant) => {
    if (t.clock() - (issued.get(tenant) ?? t.clock()) > 10 * 60 * 1000) {
      const res = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password: "correct horse battery" } });
      expect(res.status, res.text).toBe(200);
      tenant.accessToken = res.body.accessToken;
      tenant.bearer = { accessToken: res.body.accessToken, appId: t.app.id };
      issued.set(tenant, t.clock());
    }
    return tenant.bearer;
  };
  const admin = async (method: string, path: string, body?: unknown) => t.request(method, `/api/v1/admin/apps/${t.app.id}${path}`, { developer: await devToken(), body });
  return {
    t,
    get dev() {
      return dev;
    },
    admin,
    async settings(billing: Record<string, unknown>) {
      const res = await t.request("PATCH", `/api/v1/admin/apps/${t.app.id}`, { developer: await devToken(), body: { settings: { billing } } });
      expect(res.status, res.text).toBe(200);
    },
    async plan(body: Record<string, unknown>): Promise<{ id: string; slug: string; stripePriceId: string | null }> {
      const res = await admin("POST", "/plans", { priceCents: 900, ...body });
      expect(res.status, res.text).toBe(201);
      return res.body.plan;
    },
    async tenant(opts?: { email?: string }): Promise<TestTenant> {
      const tenant = await signupTenant(t, opts);
      issued.set(tenant, t.clock());
      return tenant;
    },
    tenantGet: async (tenant: TestTenant, path: string) => t.request("GET", `/api/v1/billing${path}`, { bearer: await bearer(tenant) }),
    tenantPost: async (tenant: TestTenant, path: string, body?: unknown) => t.request("POST", `/api/v1/billing${path}`, { bearer: await bearer(tenant), body: body ?? {} }),
    async subscription(tenant: TestTenant) {
      const res = await t.request("GET", "/api/v1/billing/subscription", { bearer: await bearer(tenant) });
      expect(res.status, res.text).toBe(200);
      return res.body.subscription;
    },
    async entitlements(tenant: TestTenant) {
      const res = await t.request("GET", "/api/v1/billing/entitlements", { bearer: await bearer(tenant) });
      expect(res.status, res.text).toBe(200);
      return res.body.entitlements;
    },
  };
}

export type BillingBackend = Awaited<ReturnType<typeof billingBackend>>;
export type { TestBackend };

/** The path (and query) of an absolute URL handed out by tenantd, to call through app.fetch. */
export const pathOf = (url: string) => {
  const u = new URL(url);
  return u.pathname + u.search;
};

export const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});
