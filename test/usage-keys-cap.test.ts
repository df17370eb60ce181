import { describe, expect, it } from "vitest";
import { MAX_USAGE_KEYS } from "../src/db/shared.ts";
import { expectError, signupTenant, startBackend } from "./_helpers.ts";

// Each new feature key is a row the tenant chooses to make (issue 39 item 4e).
describe("usage counters per tenant", () => {
  it(`makes at most ${MAX_USAGE_KEYS} counters per tenant and period; existing ones go on counting, another tenant and the next month have their own`, async () => {
    const t = await startBackend();
    const tenant = await signupTenant(t);
    const increment = (key: string, who = tenant, body: unknown = {}) => t.request("POST", `/api/v1/billing/usage/${key}/increment`, { bearer: who.bearer, body });
    for (let i = 0; i < MAX_USAGE_KEYS; i++) expect((await increment(`feature.${i}`)).status).toBe(200);
    const over = await increment("feature.new");
    expectError(over, 402, "limit_reached");
    expect(over.body.message).toContain(`${MAX_USAGE_KEYS} usage counters this month`);
    expect((await t.request("GET", "/api/v1/billing/usage/feature.new", { bearer: tenant.bearer })).body.count).toBe(0);

    const again = await increment("feature.7");
    expect(again.status).toBe(200);
    expect(again.body.count).toBe(2);
    expect((await increment("feature.new", tenant, { period: "daily" })).status).toBe(200);
    expect((await increment("feature.new", await signupTenant(t))).status).toBe(200);

    t.clock.advance(32 * 24 * 3600 * 1000);
    const login = await t.request("POST", "/api/v1/auth/login", { key: t.app.publishableKey, body: { email: tenant.email, password: "correct horse battery" } });
    expect((await increment("feature.new", { ...tenant, bearer: { accessToken: login.body.accessToken, appId: t.app.id } })).status).toBe(200);
  });
});
