import { describe, expect, it } from "vitest";
import { expectError } from "./_helpers.ts";
import { billingBackend } from "./billing-fixtures.ts";

describe("checkout and portal URLs are not open redirects (review item 10)", () => {
  it("refuses successUrl, cancelUrl and returnUrl outside the app's origins; the app's own origin works", async () => {
    const b = await billingBackend();
    const { t } = b;
    const plan = await b.admin("POST", "/plans", { slug: "pro", name: "Pro", priceCents: 500, currency: "usd", interval: "month", entitlements: {} });
    expect(plan.status, plan.text).toBe(201);
    const tenant = await (await import("./_helpers.ts")).signupTenant(t);
    const checkout = (body: Record<string, string>) => t.request("POST", "/api/v1/billing/checkout", { bearer: tenant.bearer, body: { planId: plan.body.plan.id, ...body } });
    const evil = "https://evil.example.net/phish";
    for (const body of [
      { successUrl: evil, cancelUrl: "https://app.example.com/no" },
      { successUrl: "https://app.example.com/ok", cancelUrl: evil },
      { successUrl: "https://app.example.com.evil.example.net/ok", cancelUrl: "https://app.example.com/no" },
    ]) {
      const res = await checkout(body);
      expectError(res, 400, "invalid_redirect");
      expect(res.body.message).toContain("corsOrigins");
    }
    const ok = await checkout({ successUrl: "https://app.example.com/ok", cancelUrl: "https://app.example.com/no" });
    expect(ok.status, ok.text).toBe(200);
    expectError(await t.request("POST", "/api/v1/billing/portal", { bearer: tenant.bearer, body: { returnUrl: evil } }), 400, "invalid_redirect");
  });
});
