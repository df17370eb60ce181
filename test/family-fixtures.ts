import { expect } from "vitest";
import type { Reply, TestTenant } from "./_helpers.ts";
import { billingBackend, form, pathOf, type BillingBackend } from "./billing-fixtures.ts";
import type { TenantBackendConfig } from "../src/index.ts";

export const PASSWORD = "correct horse battery";
export const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString("utf8"));
export const DEFAULTS = { storage: 1 };

/** The tenant a successful consume or signup reply describes. */
export function tenantFrom(reply: Reply, appId: string): TestTenant {
  expect(reply.status, reply.text).toBe(201);
  const { tenant, accessToken, refreshToken } = reply.body;
  return { id: tenant.id, email: tenant.email, accessToken, refreshToken, bearer: { accessToken, appId } };
}

/**
 * A billing backend with a "family" plan granting `seats` family seats, and an owner holding
 * it as a permanent gift; app defaults grant `storage: 1`, the plan `storage: 100`.
 */
export async function familyBackend(seats: number | boolean = 2, config: TenantBackendConfig = {}) {
  const b = await billingBackend(config);
  await b.settings({ defaultEntitlements: DEFAULTS });
  const plan = await b.plan({ name: "Family", slug: "family", entitlements: { family_seats: seats, storage: 100 } });
  const owner = await b.tenant({ email: `owner-${Math.random().toString(36).slice(2, 8)}@example.com` });
  await gift(b, owner, plan.id);
  const as = (tenant: TestTenant, method: string, path: string, body?: unknown) => b.t.request(method, path, { bearer: tenant.bearer, body });
  return {
    b,
    t: b.t,
    plan,
    owner,
    as,
    /** a new family invite of `who` (201 expected) */
    async invite(who: TestTenant = owner, body: Record<string, unknown> = {}) {
      const res = await as(who, "POST", "/api/v1/tenants/me/family-invites", body);
      expect(res.status, res.text).toBe(201);
      return res.body.invite as { id: string; token: string; status: string };
    },
    consume: (token: string, email: string, password = PASSWORD) =>
      b.t.request("POST", "/api/v1/auth/family-invite/consume", { key: b.t.app.publishableKey, body: { token, email, password } }),
    /** entitlements and subscription as the tenant reads them */
    async view(who: TestTenant) {
      const subscription = await b.subscription(who);
      return { entitlements: await b.entitlements(who), source: subscription?.source ?? null, familyOwnerEmail: subscription?.familyOwnerEmail ?? null };
    },
    setSeats: async (n: number) => expect((await b.admin("PATCH", `/plans/${plan.id}`, { entitlements: { family_seats: n, storage: 100 } })).status).toBe(200),
  };
}

export type FamilyBackend = Awaited<ReturnType<typeof familyBackend>>;

export async function gift(b: BillingBackend, tenant: TestTenant, planId: string) {
  const res = await b.admin("POST", `/tenants/${tenant.id}/billing/gift`, { planId });
  expect(res.status, res.text).toBe(200);
}

/** Subscribes through the development provider's checkout page. */
export async function devSubscribe(b: BillingBackend, tenant: TestTenant, planId: string) {
  const res = await b.tenantPost(tenant, "/checkout", { planId, successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/cancel" });
  expect(res.status, res.text).toBe(200);
  const confirm = await b.t.request("POST", pathOf(res.body.url), form({ action: "confirm" }));
  expect(confirm.status, confirm.text).toBe(303);
}
