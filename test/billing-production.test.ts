import { describe, expect, it } from "vitest";
import { expectError } from "./_helpers.ts";
import { billingBackend } from "./billing-fixtures.ts";
import { resolveConfig } from "../src/index.ts";

const urls = { successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" };

describe("development billing provider in production", () => {
  it("is on by default, and off when NODE_ENV=production unless TENANTD_DEV_BILLING says otherwise", () => {
    const dir = { dataDir: "/tmp/tenantd-config-test", logger: "silent" as const };
    expect(resolveConfig(dir, {}).devBilling).toBe(true);
    expect(resolveConfig(dir, { NODE_ENV: "production" }).devBilling).toBe(false);
    expect(resolveConfig(dir, { NODE_ENV: "production", TENANTD_DEV_BILLING: "1" }).devBilling).toBe(true);
    expect(resolveConfig({ ...dir, devBilling: false }, {}).devBilling).toBe(false);
  });

  it("when off, an app without Stripe keys gives no free plan: checkout and portal refuse, the pages are gone", async () => {
    const b = await billingBackend({ devBilling: false });
    const plan = await b.plan({ name: "Pro", slug: "pro", entitlements: { pro: true } });
    const tenant = await b.tenant();
    const checkout = await b.tenantPost(tenant, "/checkout", { planId: plan.id, ...urls });
    expectError(checkout, 409, "conflict");
    expect(checkout.body.message).toContain("stripeSecretKey");
    expectError(await b.tenantPost(tenant, "/portal", { returnUrl: urls.successUrl }), 409, "conflict");
    expect(await b.subscription(tenant)).toBeNull();
    expectError(await b.t.request("GET", "/api/v1/public/billing/dev/checkout/anything"), 404, "not_found");
  });
});
